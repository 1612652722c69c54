"""What the front ends share: ``trapy-gtp`` (`trapy_rl.gtp`), ``trapy-play`` (`trapy_rl.play`)
and the web board (`trapy_rl.web`) import these modules, and never one another.

Modules:

    options      the board side and the colour names every front end reads the same way
    gtp_engine   `GtpEngine`, the GTP state machine, and the move line ``showboard`` writes
    gtp_records  `records_from_gtp`: game records read back from GTP text
    human_game   a game against a person: who made each move, take-backs, the game record
"""
