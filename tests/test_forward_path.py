"""tools/forward_path.py: the training forward path GPT.forward -> loss stays short (issue 25)."""

from __future__ import annotations

import textwrap

from script_loader import load_script

forward_path = load_script("tools/forward_path.py")

#: The code lines a reader reads on the path (whole functions, signatures included); the
#: code review measured 263 before the forward path was rewritten, nanoGPT's is 47.
LIMIT = 100


def test_the_forward_path_is_at_most_100_code_lines():
    counts = forward_path.count_forward_path()
    table = "\n".join(f"{name}: {c.read}" for name, c in sorted(counts.per_function.items()))
    # Traced, not assumed: the model's and the attention's forward are on the path.
    assert "model:GPT.forward" in counts.per_function, table
    assert "attention:MultiHeadAttention.forward" in counts.per_function, table
    assert "norm:LayerNorm.forward" in counts.per_function, table
    assert 0 < counts.run <= counts.read <= LIMIT, f"{counts.read} code lines:\n{table}"


def test_code_lines_leave_out_docstrings_comments_and_blank_lines(tmp_path):
    path = tmp_path / "sample.py"
    path.write_text(
        textwrap.dedent(
            '''
            def f(x):
                """A docstring
                of two lines."""
                # a comment

                y = (x +
                     1)  # one statement on two lines
                if y > 0:
                    return y
                return -y
            '''
        )
    )
    source = forward_path._Source(path)
    ((first, (name, node)),) = source.functions.items()
    whole = source.code_lines(range(node.lineno, node.end_lineno + 1))
    assert name == "f" and len(whole) == 6  # def, y = (2 lines), if, return, return
    assert source.code_lines(source.statements[7]) == {7, 8}  # a statement's every line
    assert source.code_lines(source.statements[9]) == {9}  # a compound statement: its header
