"""Stress-corpus models for aoti-lint: codegen shapes that fixtures/ does not cover.

Each entry: name -> Spec(model factory, example inputs, dynamic shapes, probes).
Probes are (label, make_inputs) pairs run against the compiled CPU package by stress/probe.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim

L = torch.long


def t(*a, **k):
    return torch.tensor(*a, **k)


def ri(lo, hi, shape):
    return torch.randint(lo, hi, shape)


# ---------------------------------------------------------------- models


class NonzeroIndex(nn.Module):
    """idx = nonzero(x[:, 0] > 0) (unbacked count u0, values in [0, n)); table[idx]."""

    def forward(self, x, table):
        idx = torch.nonzero(x[:, 0] > 0).squeeze(1)
        return table[idx] * 2


class BoolMask(nn.Module):
    """x[mask]: unbacked number of rows."""

    def forward(self, x, mask):
        return x[mask] + 1


class ItemArange(nn.Module):
    """n = cnt.item() used as a size: pe.weight[arange(n)] (constant bound 64, unbacked index range)."""

    def __init__(self):
        super().__init__()
        self.pe = nn.Embedding(64, 8)

    def forward(self, x, cnt):
        n = cnt.item()
        torch._check(n >= 0)
        pos = torch.arange(n)
        return self.pe(pos).sum(0) + x.sum(0)


class IndexPut(nn.Module):
    """x[idx] = v (accumulate=False)."""

    def forward(self, x, idx, v):
        x = x.clone()
        x[idx] = v
        return x


class IndexPutAcc(nn.Module):
    """index_put_ with accumulate=True."""

    def forward(self, x, idx, v):
        return x.clone().index_put_((idx,), v, accumulate=True)


class ScatterAdd(nn.Module):
    def forward(self, x, idx, src):
        return x.scatter_add(0, idx, src)


class Gather3dDim0(nn.Module):
    def forward(self, x, idx):
        return torch.gather(x, 0, idx)


class EmbeddingBag(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(100, 8))

    def forward(self, idx, offsets):
        return F.embedding_bag(idx, self.w, offsets, mode="sum")


class OneHot(nn.Module):
    def forward(self, idx, w):
        return F.one_hot(idx, 10).to(w.dtype) @ w


class Take(nn.Module):
    def forward(self, x, idx):
        return torch.take(x, idx)


class TwoIndex(nn.Module):
    def forward(self, x, i, j):
        return x[i, j]


class ColIndex3d(nn.Module):
    def forward(self, x, idx):
        return x[:, idx] * 3


class CumsumIndex(nn.Module):
    """idx = cumsum(c) - 1 (values depend on data); x[idx]."""

    def forward(self, x, c):
        idx = torch.cumsum(c, 0) - 1
        return x[idx]


class CrossEntropy(nn.Module):
    def forward(self, logits, target):
        return F.cross_entropy(logits, target)


class Bucketize(nn.Module):
    def forward(self, v, boundaries, table):
        idx = torch.bucketize(v, boundaries)
        return table[idx]


class RepeatInterleave(nn.Module):
    def forward(self, x, repeats):
        return torch.repeat_interleave(x, repeats, dim=0) * 2


class TwoOutputs(nn.Module):
    def forward(self, x, idx, y, jdx):
        return x[idx] * 2, y[:, jdx].amax(0)


class DerivedDims(nn.Module):
    """x [2n, 8], y [n+1, 8]: bounds are 2*s and s+1."""

    def forward(self, x, y, idx):
        return x[idx] + y[idx]


# ---------------------------------------------------------------- specs


@dataclass
class Spec:
    model: Callable[[], nn.Module]
    example: Callable[[], tuple]
    dynamic: Callable[[], Any]
    probes: list[tuple[str, Callable[[], tuple]]] = field(default_factory=list)
    what: str = ""


def _specs() -> dict[str, Spec]:
    S: dict[str, Spec] = {}
    S["nonzero_index"] = Spec(
        NonzeroIndex, lambda: (torch.randn(10, 8), torch.randn(12, 4)),
        lambda: {"x": {0: Dim("n")}, "table": {0: Dim("t")}},
        [("normal", lambda: (torch.randn(10, 8), torch.randn(12, 4))),
         ("empty_table", lambda: (torch.ones(10, 8), torch.randn(0, 4))),
         ("oob_table", lambda: (torch.ones(10, 8), torch.randn(5, 4))),
         ("empty_x", lambda: (torch.ones(0, 8), torch.randn(5, 4)))])
    S["bool_mask"] = Spec(
        BoolMask, lambda: (torch.randn(10, 8), torch.rand(10) > 0.5),
        lambda: (lambda n: {"x": {0: n}, "mask": {0: n}})(Dim("n")),
        [("normal", lambda: (torch.randn(10, 8), torch.rand(10) > 0.5)),
         ("empty", lambda: (torch.randn(0, 8), torch.zeros(0, dtype=torch.bool))),
         ("all_false", lambda: (torch.randn(5, 8), torch.zeros(5, dtype=torch.bool)))])
    S["item_arange"] = Spec(
        ItemArange, lambda: (torch.randn(4, 8), t(5)),
        lambda: {"x": {0: Dim("b")}, "cnt": None},
        [("normal", lambda: (torch.randn(4, 8), t(5))),
         ("n64", lambda: (torch.randn(4, 8), t(64))),
         ("n65", lambda: (torch.randn(4, 8), t(65))),
         ("n0", lambda: (torch.randn(4, 8), t(0))),
         ("empty_x", lambda: (torch.randn(0, 8), t(3)))])
    S["index_put"] = Spec(
        IndexPut, lambda: (torch.randn(10, 8), ri(0, 10, (4,)), torch.randn(4, 8)),
        lambda: (lambda m: {"x": {0: Dim("n")}, "idx": {0: m}, "v": {0: m}})(Dim("m")),
        [("normal", lambda: (torch.randn(10, 8), t([0, 9]), torch.randn(2, 8))),
         ("empty", lambda: (torch.randn(0, 8), t([0, 0]), torch.randn(2, 8))),
         ("oob", lambda: (torch.randn(10, 8), t([0, 10]), torch.randn(2, 8))),
         ("empty_idx", lambda: (torch.randn(10, 8), torch.zeros(0, dtype=L), torch.randn(0, 8)))])
    S["index_put_acc"] = Spec(
        IndexPutAcc, lambda: (torch.randn(10, 8), ri(0, 10, (4,)), torch.randn(4, 8)),
        lambda: (lambda m: {"x": {0: Dim("n")}, "idx": {0: m}, "v": {0: m}})(Dim("m")),
        [("normal", lambda: (torch.randn(10, 8), t([0, 9, 9]), torch.randn(3, 8))),
         ("empty", lambda: (torch.randn(0, 8), t([0, 0]), torch.randn(2, 8))),
         ("oob", lambda: (torch.randn(10, 8), t([0, 10]), torch.randn(2, 8)))])
    S["scatter_add"] = Spec(
        ScatterAdd, lambda: (torch.randn(10, 8), ri(0, 10, (4, 8)), torch.randn(4, 8)),
        lambda: (lambda m: {"x": {0: Dim("n")}, "idx": {0: m}, "src": {0: m}})(Dim("m")),
        [("normal", lambda: (torch.randn(10, 8), ri(0, 10, (4, 8)), torch.randn(4, 8))),
         ("empty", lambda: (torch.randn(0, 8), torch.zeros(2, 8, dtype=L), torch.randn(2, 8))),
         ("oob", lambda: (torch.randn(10, 8), torch.full((2, 8), 10, dtype=L), torch.randn(2, 8)))])
    S["gather3d_dim0"] = Spec(
        Gather3dDim0, lambda: (torch.randn(6, 4, 5), ri(0, 6, (3, 4, 5))),
        lambda: (lambda b, c: {"x": {0: Dim("a"), 1: b, 2: c}, "idx": {0: Dim("k"), 1: b, 2: c}})(Dim("b"), Dim("c")),
        [("normal", lambda: (torch.randn(6, 4, 5), ri(0, 6, (3, 4, 5)))),
         ("empty", lambda: (torch.randn(0, 4, 5), torch.zeros(3, 4, 5, dtype=L))),
         ("oob", lambda: (torch.randn(6, 4, 5), torch.full((3, 4, 5), 6, dtype=L)))])
    S["embedding_bag"] = Spec(
        EmbeddingBag, lambda: (ri(0, 100, (10,)), t([0, 3, 7])),
        lambda: {"idx": {0: Dim("n")}, "offsets": {0: Dim("b")}},
        [("normal", lambda: (ri(0, 100, (10,)), t([0, 3, 7]))),
         ("oob", lambda: (t([1, 100, 3]), t([0, 2]))),
         ("empty_idx", lambda: (torch.zeros(0, dtype=L), t([0, 0])))])
    S["one_hot"] = Spec(
        OneHot, lambda: (ri(0, 10, (6,)), torch.randn(10, 4)),
        lambda: {"idx": {0: Dim("n")}, "w": None},
        [("normal", lambda: (ri(0, 10, (6,)), torch.randn(10, 4))),
         ("oob", lambda: (t([1, 10]), torch.randn(10, 4))),
         ("empty", lambda: (torch.zeros(0, dtype=L), torch.randn(10, 4)))])
    S["take"] = Spec(
        Take, lambda: (torch.randn(4, 6), ri(0, 24, (5,))),
        lambda: {"x": {0: Dim("a"), 1: Dim("b")}, "idx": {0: Dim("m")}},
        [("normal", lambda: (torch.randn(4, 6), t([0, 23, -1]))),
         ("empty", lambda: (torch.randn(0, 6), t([0]))),
         ("oob", lambda: (torch.randn(4, 6), t([24])))])
    S["two_index"] = Spec(
        TwoIndex, lambda: (torch.randn(5, 7), ri(0, 5, (4,)), ri(0, 7, (4,))),
        lambda: (lambda m: {"x": {0: Dim("a"), 1: Dim("b")}, "i": {0: m}, "j": {0: m}})(Dim("m")),
        [("normal", lambda: (torch.randn(5, 7), t([0, 4]), t([0, 6]))),
         ("empty_a", lambda: (torch.randn(0, 7), t([0]), t([0]))),
         ("empty_b", lambda: (torch.randn(5, 0), t([0]), t([0]))),
         ("oob_j", lambda: (torch.randn(5, 7), t([0]), t([7])))])
    S["col_index3d"] = Spec(
        ColIndex3d, lambda: (torch.randn(2, 6, 4), ri(0, 6, (3,))),
        lambda: {"x": {0: Dim("b"), 1: Dim("t"), 2: Dim("c")}, "idx": {0: Dim("m")}},
        [("normal", lambda: (torch.randn(2, 6, 4), t([0, 5]))),
         ("empty_t", lambda: (torch.randn(2, 0, 4), t([0]))),
         ("oob", lambda: (torch.randn(2, 6, 4), t([6])))])
    S["cumsum_index"] = Spec(
        CumsumIndex, lambda: (torch.randn(10, 8), torch.ones(4, dtype=L)),
        lambda: {"x": {0: Dim("n")}, "c": {0: Dim("m")}},
        [("normal", lambda: (torch.randn(10, 8), torch.ones(4, dtype=L))),
         ("empty", lambda: (torch.randn(0, 8), torch.ones(2, dtype=L))),
         ("oob", lambda: (torch.randn(3, 8), torch.ones(5, dtype=L)))])
    S["cross_entropy"] = Spec(
        CrossEntropy, lambda: (torch.randn(4, 10), ri(0, 10, (4,))),
        lambda: (lambda b: {"logits": {0: b, 1: Dim("C")}, "target": {0: b}})(Dim("b")),
        [("normal", lambda: (torch.randn(4, 10), ri(0, 10, (4,)))),
         ("empty_C", lambda: (torch.randn(4, 0), torch.zeros(4, dtype=L))),
         ("empty_b", lambda: (torch.randn(0, 10), torch.zeros(0, dtype=L))),
         ("oob", lambda: (torch.randn(4, 10), t([0, 1, 2, 10])))])
    S["bucketize"] = Spec(
        Bucketize, lambda: (torch.randn(5), torch.arange(6.0), torch.randn(7, 4)),
        lambda: {"v": {0: Dim("m")}, "boundaries": {0: Dim("b")}, "table": {0: Dim("t")}},
        [("normal", lambda: (t([-1.0, 2.5, 9.0]), torch.arange(6.0), torch.randn(7, 4))),
         ("oob", lambda: (t([9.0]), torch.arange(6.0), torch.randn(6, 4))),
         ("empty_table", lambda: (t([1.5]), torch.arange(6.0), torch.randn(0, 4)))])
    S["repeat_interleave"] = Spec(
        RepeatInterleave, lambda: (torch.randn(4, 8), t([1, 2, 0, 3])),
        lambda: (lambda n: {"x": {0: n}, "repeats": {0: n}})(Dim("n")),
        [("normal", lambda: (torch.randn(4, 8), t([1, 2, 0, 3]))),
         ("empty", lambda: (torch.randn(0, 8), torch.zeros(0, dtype=L))),
         ("zeros", lambda: (torch.randn(3, 8), torch.zeros(3, dtype=L)))])
    S["two_outputs"] = Spec(
        TwoOutputs, lambda: (torch.randn(10, 8), ri(0, 10, (4,)), torch.randn(3, 6), ri(0, 6, (2,))),
        lambda: {"x": {0: Dim("n")}, "idx": {0: Dim("m")}, "y": {0: Dim("r"), 1: Dim("c")}, "jdx": {0: Dim("k")}},
        [("normal", lambda: (torch.randn(10, 8), t([0, 9]), torch.randn(3, 6), t([0, 5]))),
         ("empty_n", lambda: (torch.randn(0, 8), t([0]), torch.randn(3, 6), t([0]))),
         ("empty_c", lambda: (torch.randn(10, 8), t([0]), torch.randn(3, 0), t([0]))),
         ("empty_r", lambda: (torch.randn(10, 8), t([0]), torch.randn(0, 6), t([0]))),
         ("oob_jdx", lambda: (torch.randn(10, 8), t([0]), torch.randn(3, 6), t([6])))])
    S["derived_dims"] = Spec(
        DerivedDims, lambda: (torch.randn(8, 8), torch.randn(5, 8), ri(0, 5, (3,))),
        lambda: (lambda n: {"x": {0: 2 * n}, "y": {0: n + 1}, "idx": {0: Dim("m")}})(Dim("n")),
        [("normal", lambda: (torch.randn(8, 8), torch.randn(5, 8), t([0, 4]))),
         ("n0", lambda: (torch.randn(0, 8), torch.randn(1, 8), t([0]))),
         ("oob_y", lambda: (torch.randn(8, 8), torch.randn(5, 8), t([5]))),
         ("oob_x_only", lambda: (torch.randn(8, 8), torch.randn(5, 8), t([7])))])
    return S


SPECS = _specs()
