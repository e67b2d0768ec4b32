"""Solutions of 15_flash_attention's build exercises."""

from __future__ import annotations

import math

import torch

from ...attention.flash import flash_forward as library_flash_forward


def online_softmax(x: torch.Tensor, block: int) -> torch.Tensor:
    """Softmax along the last axis of x (R, T), reading `block` entries at a time."""
    m = torch.full(x.shape[:-1], -math.inf)  # (R,) running maximum
    l = torch.zeros(x.shape[:-1])  # (R,) running sum of exp(x - m)
    for start in range(0, x.shape[-1], block):
        part = x[:, start : start + block]  # (R, block)
        new_m = torch.maximum(m, part.amax(dim=-1))  # (R,)
        l = l * torch.exp(m - new_m) + torch.exp(part - new_m[:, None]).sum(dim=-1)  # (R,)
        m = new_m
    return torch.exp(x - m[:, None]) / l[:, None]  # (R, T)


def merge_softmax_stats(first, second):
    """(m, l) of two parts of the same rows -> (m, l) of both parts together."""
    (m1, l1), (m2, l2) = first, second
    m = torch.maximum(m1, m2)  # (R,)
    return m, l1 * torch.exp(m1 - m) + l2 * torch.exp(m2 - m)  # (R,), (R,)


def flash_forward(q, k, v, causal, block_q, block_k):
    """Tiled attention: q, k, v (B, H, T, D) -> (out (B, H, T, D), lse (B, H, T))."""
    T, scale = q.shape[-2], 1.0 / math.sqrt(q.shape[-1])
    outs, lses = [], []
    for i in range(0, T, block_q):
        q_tile = q[:, :, i : i + block_q, :]  # (B, H, bq, D)
        rows = torch.arange(i, i + q_tile.shape[-2])[:, None]  # (bq, 1)
        m = torch.full(q_tile.shape[:-1], -math.inf)  # (B, H, bq)
        l = torch.zeros(q_tile.shape[:-1])  # (B, H, bq)
        acc = torch.zeros_like(q_tile)  # (B, H, bq, D)
        for j in range(0, min(T, i + block_q) if causal else T, block_k):  # skip future tiles
            s = q_tile @ k[:, :, j : j + block_k, :].transpose(-2, -1) * scale  # (B, H, bq, bk)
            if causal:
                cols = torch.arange(j, j + s.shape[-1])[None, :]  # (1, bk)
                s = s.masked_fill(cols > rows, -math.inf)
            new_m = torch.maximum(m, s.amax(dim=-1))  # (B, H, bq)
            p = torch.exp(s - new_m[:, :, :, None])  # (B, H, bq, bk)
            rescale = torch.exp(m - new_m)  # (B, H, bq)
            l = l * rescale + p.sum(dim=-1)
            acc = acc * rescale[:, :, :, None] + p @ v[:, :, j : j + block_k, :]
            m = new_m
        outs.append(acc / l[:, :, :, None])
        lses.append(m + torch.log(l))
    return torch.cat(outs, dim=-2), torch.cat(lses, dim=-1)  # (B, H, T, D), (B, H, T)


class FlashAttention(torch.autograd.Function):
    """Tiled attention whose backward recomputes P tile by tile from Q, K and the logsumexp."""

    @staticmethod
    def forward(ctx, q, k, v, causal):
        out, lse = library_flash_forward(q, k, v, causal, 32, 32)  # (B, H, T, D), (B, H, T)
        ctx.save_for_backward(q, k, v, out, lse)  # one per-query tensor: lse
        ctx.causal = causal
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, out, lse = ctx.saved_tensors
        T, scale, block = q.shape[-2], 1.0 / math.sqrt(q.shape[-1]), 32
        delta = (grad_out * out).sum(dim=-1, keepdim=True)  # (B, H, T, 1)
        dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
        for i in range(0, T, block):
            rows = torch.arange(i, min(i + block, T))[:, None]  # (bq, 1)
            qi, doi = q[:, :, i : i + block, :], grad_out[:, :, i : i + block, :]  # (B, H, bq, D)
            for j in range(0, T, block):
                if ctx.causal and j > rows[-1, 0]:
                    break  # the rest of the key tiles lie in the future
                kj, vj = k[:, :, j : j + block, :], v[:, :, j : j + block, :]  # (B, H, bk, D)
                s = qi @ kj.transpose(-2, -1) * scale  # (B, H, bq, bk)
                if ctx.causal:
                    s = s.masked_fill(torch.arange(j, j + s.shape[-1])[None, :] > rows, -math.inf)
                p = torch.exp(s - lse[:, :, i : i + block, None])  # (B, H, bq, bk) recomputed
                dv[:, :, j : j + block, :] += p.transpose(-2, -1) @ doi
                ds = p * (doi @ vj.transpose(-2, -1) - delta[:, :, i : i + block, :])
                dq[:, :, i : i + block, :] += ds @ kj * scale
                dk[:, :, j : j + block, :] += ds.transpose(-2, -1) @ qi * scale
        return dq, dk, dv, None
