"""A tiny sequence-to-sequence task made on the fly: reverse a string of digits (14_encoder_decoder),
with the loop that trains an :class:`~.encoder_decoder.EncoderDecoder` on it and its score.

Tokens: 0 = ``<pad>``, 1 = ``<bos>`` (start of the decoder's input), 2 = ``<eos>`` (end of
the answer), 3 … 12 = the digits 0 … 9. Reversal is a good first task for an encoder-decoder:
the answer's k-th digit is the source's (n−1−k)-th, so a trained model's cross-attention
should light up the anti-diagonal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from . import _checks as check
from .i18n import _

if TYPE_CHECKING:  # the task does not need the model to exist; only the training loop uses one
    from .encoder_decoder import EncoderDecoder

PAD, BOS, EOS = 0, 1, 2
DIGIT_OFFSET = 3
VOCAB_SIZE = DIGIT_OFFSET + 10
SPECIAL = {PAD: "<pad>", BOS: "<bos>", EOS: "<eos>"}


def encode_digits(digits: str) -> list[int]:
    """The digit string "0123" -> token ids [3, 4, 5, 6] (14_encoder_decoder)."""
    check.instance("digits", digits, str)
    if not digits or not digits.isdigit() or not digits.isascii():
        raise ValueError(
            _("digits must be a non-empty string of the characters 0-9, got {digits!r}").format(
                digits=digits
            )
        )
    return [DIGIT_OFFSET + int(ch) for ch in digits]


def decode_tokens(ids, stop_at_eos: bool = True) -> str:
    """Token ids (list or 1-D tensor) -> the digit string; ``<bos>``/``<pad>`` are skipped and
    reading stops at the first ``<eos>`` (unless ``stop_at_eos=False``)."""
    values = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    out = []
    for value in values:
        if value == EOS and stop_at_eos:
            break
        if DIGIT_OFFSET <= value < VOCAB_SIZE:
            out.append(str(value - DIGIT_OFFSET))
    return "".join(out)


def token_names(ids) -> list[str]:
    """Readable labels for plots: digits as themselves, specials as ``<bos>`` etc."""
    values = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    return [SPECIAL.get(v, str(v - DIGIT_OFFSET)) for v in values]


@dataclass
class Seq2SeqBatch:
    """One padded batch: ``src`` [B, S] (digits then ``<pad>``), ``tgt_in`` [B, T]
    (``<bos>`` + answer, padded) and ``tgt_out`` [B, T] (answer + ``<eos>``, padded) —
    ``tgt_out`` is ``tgt_in`` shifted left by one, the decoder's next-token targets."""

    src: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor

    @property
    def sources(self) -> list[str]:
        return [decode_tokens(row) for row in self.src]

    @property
    def answers(self) -> list[str]:
        return [decode_tokens(row) for row in self.tgt_out]


@dataclass
class ReversalTask:
    """Random digit strings of ``min_len`` … ``max_len`` digits and their reversals (14_encoder_decoder).

    ``sample(n, generator)`` draws strings with the given ``torch.Generator`` (so a seed fixes
    them); ``batch(strings)`` turns strings into a padded :class:`Seq2SeqBatch`.
    """

    min_len: int = 3
    max_len: int = 8

    def __post_init__(self) -> None:
        check.integer("min_len", self.min_len, None)
        check.integer("max_len", self.max_len, None)
        if not 1 <= self.min_len <= self.max_len:
            raise ValueError(
                _("need 1 <= min_len <= max_len, got min_len={min_len}, max_len={max_len}").format(
                    min_len=self.min_len, max_len=self.max_len
                )
            )

    @property
    def source_length(self) -> int:
        """S, the padded source length."""
        return self.max_len

    @property
    def target_length(self) -> int:
        """T, the padded decoder length (answer + one ``<bos>``/``<eos>``)."""
        return self.max_len + 1

    @staticmethod
    def answer(digits: str) -> str:
        """The right output for ``digits``: the same digits, reversed."""
        return digits[::-1]

    def sample(self, n: int, generator: torch.Generator | None = None) -> list[str]:
        """``n`` random digit strings (lengths uniform in min_len … max_len)."""
        check.integer("n", n)
        lengths = torch.randint(self.min_len, self.max_len + 1, (n,), generator=generator)  # (n,)
        digits = torch.randint(0, 10, (n, self.max_len), generator=generator)  # (n, max_len)
        return [
            "".join(str(d) for d in row[:length].tolist()) for row, length in zip(digits, lengths)
        ]

    def batch(self, strings: list[str]) -> Seq2SeqBatch:
        """Pad ``strings`` into ``src`` [B, S], ``tgt_in`` [B, T], ``tgt_out`` [B, T]."""
        if not strings:
            raise ValueError(_("strings must hold at least one digit string"))
        B = len(strings)
        src = torch.full((B, self.source_length), PAD, dtype=torch.long)  # (B, S)
        tgt_in = torch.full((B, self.target_length), PAD, dtype=torch.long)  # (B, T)
        tgt_out = torch.full((B, self.target_length), PAD, dtype=torch.long)  # (B, T)
        for b, digits in enumerate(strings):
            if not self.min_len <= len(digits) <= self.max_len:
                raise ValueError(
                    _(
                        "string {digits!r} has {n_digits} digits; this task takes {min_len} … "
                        "{max_len}"
                    ).format(
                        digits=digits,
                        n_digits=len(digits),
                        min_len=self.min_len,
                        max_len=self.max_len,
                    )
                )
            source = encode_digits(digits)
            target = encode_digits(self.answer(digits))
            n = len(source)
            src[b, :n] = torch.tensor(source)
            tgt_in[b, : n + 1] = torch.tensor([BOS, *target])
            tgt_out[b, : n + 1] = torch.tensor([*target, EOS])
        return Seq2SeqBatch(src, tgt_in, tgt_out)

    def random_batch(
        self, n: int, generator: torch.Generator | None = None, exclude: set[str] | None = None
    ) -> Seq2SeqBatch:
        """A fresh batch of ``n`` strings; strings in ``exclude`` (a held-out set) are redrawn."""
        strings = self.sample(n, generator)
        if exclude:
            for i, digits in enumerate(strings):
                while digits in exclude:
                    digits = self.sample(1, generator)[0]
                strings[i] = digits
        return self.batch(strings)


def train_seq2seq(
    model: EncoderDecoder,
    task: ReversalTask,
    steps: int = 600,
    batch_size: int = 64,
    lr: float = 3e-3,
    seed: int = 0,
    exclude: set[str] | None = None,
    log_every: int = 50,
) -> list[float]:
    """Train ``model`` on batches from ``task`` (e.g. a :class:`ReversalTask`) with
    AdamW and a short linear warm-up (post-norm needs it); returns the loss of every step.
    Strings in ``exclude`` (the held-out set) are never trained on. Prints the loss every
    ``log_every`` steps (0 = silent)."""
    check.integer("steps", steps)
    check.integer("batch_size", batch_size)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.05, 1 - s / steps)
    )
    device = next(model.parameters()).device
    model.train()
    losses = []
    for step in range(steps):
        batch = task.random_batch(batch_size, generator, exclude=exclude)
        _logits, loss = model(
            batch.src.to(device), batch.tgt_in.to(device), batch.tgt_out.to(device)
        )
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if log_every and (step % log_every == 0 or step == steps - 1):
            print(_("step {step:4d}  loss {loss:.4f}").format(step=step, loss=loss.item()))
    model.eval()
    return losses


def exact_match(model: EncoderDecoder, batch: Seq2SeqBatch, beam_width: int | None = None) -> float:
    """Fraction of ``batch`` whose decoded answer equals the reference exactly
    (greedy, or beam search with ``beam_width``)."""
    device = next(model.parameters()).device
    src = batch.src.to(device)  # (B, S)
    steps = min(batch.tgt_out.shape[1], model.config.max_len - 1)  # answer + <eos>
    if beam_width is None:
        out = model.greedy_decode(src, max_new_tokens=steps)  # (B, 1 + n)
    else:
        out = model.beam_decode(src, beam_width=beam_width, max_new_tokens=steps)[0]  # (B, 1 + n)
    predictions = [decode_tokens(row[1:]) for row in out.cpu()]
    return sum(p == a for p, a in zip(predictions, batch.answers)) / len(predictions)
