"""The two commands over exercises (introduced in 00_setup): ``check``, a learner's progress
table, and ``grade``, a teacher's gradebook of a class (README "For teachers"). Their options
live beside the exercises (``exercises.progress``, ``exercises.grading``).
"""

from __future__ import annotations

import argparse


def command_check(args: argparse.Namespace) -> int:
    """``check``: the progress table of exercises.progress (00_setup shows the same)."""
    from ..exercises.progress import print_progress

    return print_progress(args.folder, run=args.run)


def command_grade(args: argparse.Namespace) -> int:
    """``grade``: run and grade a class's notebooks (exercises.grading; README "For teachers")."""
    from ..exercises.grading import grade_class
    from ..exercises.grading.sandbox import Limits

    limits = Limits(
        memory_mib=args.memory,
        cpu_seconds=args.cpu,
        wall_seconds=args.notebook_timeout,
    )
    grade_class(
        args.submissions,
        args.out,
        course=args.course,
        feedback=args.feedback,
        gradescope=args.gradescope,
        timeout=args.timeout,
        limits=limits,
        trusted_submissions=args.trusted_submissions,
    )
    return 0
