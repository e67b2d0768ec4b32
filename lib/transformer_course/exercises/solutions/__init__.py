"""Solutions of the build exercises, one module per notebook (``solutions.mask`` for 06_mask …).

Read one only after an honest try — or ask the checker for a hint first
(``check_…(your_function, hint=True)``). ``show_solution(check_…)`` prints the one you need.
The test suite runs every solution through its checker, so a solution here is known to pass.
"""
