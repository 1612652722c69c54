"""Device choice and the bf16 support rule."""

from __future__ import annotations

import pytest
import torch

from trapy_rl.nn.device import bf16_supported, cpu_bf16_flags, resolve_device


def test_cpu_bf16_rule_is_mkldnn_and_a_native_bf16_flag():
    flags = cpu_bf16_flags()
    assert set(flags) <= {"avx512_bf16", "amx_bf16", "amx_tile"}
    assert bf16_supported("cpu") == (torch.backends.mkldnn.is_available() and bool(flags))


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="'auto', 'cpu' or 'cuda"):
        resolve_device("gpu")
    with pytest.raises(ValueError, match="'auto', 'cpu' or 'cuda"):
        resolve_device("meta")
