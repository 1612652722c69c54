"""Exact values of small-board Trap Y positions: a df-pn / alpha-beta solver."""

from trapy_rl.solve.solver import METHODS, Policy, Solution, SolveBudgetError, Solver

__all__ = ["METHODS", "Policy", "Solution", "SolveBudgetError", "Solver"]
