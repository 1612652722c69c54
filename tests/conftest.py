"""Test options: slow experiments run only with --runslow; gpu tests only where CUDA is."""

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--runslow"):
        skip = pytest.mark.skip(reason="slow: run with --runslow (make test-slow)")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip)
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if gpu_items and not _has_cuda():
        skip_gpu = pytest.mark.skip(reason="needs a CUDA device")
        for item in gpu_items:
            item.add_marker(skip_gpu)


def _has_cuda() -> bool:
    import torch  # only when gpu tests were collected: importing torch costs seconds

    return torch.cuda.is_available()


@pytest.fixture(scope="module")
def one_torch_thread():
    """Small nets run fastest on one thread (and the tests share the machine); restored after."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
