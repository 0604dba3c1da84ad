"Property tests of the reconstruction stack against an independent float64 numpy reference, and every error case."
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from inverse_surprisal.losses import (
    REDUCTIONS, dataset_base_mean, distribution_relative_reconstruction_loss, effective_beta,
    example_inverse_surprisal_weighted_reconstruction_loss, fractional_decomposition, fractional_gain,
    token_surprisal_share_reconstruction_loss, token_surprisal_share_weights, weight_health, y_region_nll)

settings.register_profile('ci', max_examples=60, deadline=None)
settings.load_profile('ci')
RTOL = 1e-9

def _np_reduce(v, reduction): return {'none': v, 'mean': v.mean(), 'sum': v.sum()}[reduction]

def _close(got, want, rtol=RTOL, atol=0.0):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64), rtol=rtol, atol=atol)

n_examples = st.integers(1, 40)
magnitudes = st.sampled_from([1e-6, 1e-3, 1.0, 1e2, 1e5])
eps_values = st.sampled_from([1e-8, 1e-4, 1e-2, 1.0, 10.0])
reductions = st.sampled_from(REDUCTIONS)

@st.composite
def batches(draw):
    "(l, b) float64 arrays: nonnegative, with b spanning 0 to a drawn magnitude."
    n, scale = draw(n_examples), draw(magnitudes)
    unit = arrays(np.float64, n, elements=st.floats(0, 1, allow_nan=False))
    return draw(unit) * scale * 3, draw(unit) * scale

@given(batches(), eps_values, reductions)
def test_example_loss_value_and_grad_match_numpy(lb, eps, reduction):
    l, b = lb
    w = 1.0 / (b + eps)                                           # reference weights
    want = _np_reduce(l * w, reduction)
    want_grad = w / (len(l) if reduction == 'mean' else 1)        # d sum-or-mean / d l_i
    lt = torch.tensor(l).requires_grad_()
    got = example_inverse_surprisal_weighted_reconstruction_loss(lt, torch.tensor(b), eps, reduction)
    _close(got.detach(), want)
    got.sum().backward()
    _close(lt.grad, want_grad)

@given(batches(), eps_values)
def test_float32_agrees_with_float64(lb, eps):
    l, b = lb
    f64 = example_inverse_surprisal_weighted_reconstruction_loss(torch.tensor(l), torch.tensor(b), eps, 'none')
    f32 = example_inverse_surprisal_weighted_reconstruction_loss(torch.tensor(l).float(), torch.tensor(b).float(), eps, 'none')
    assert f32.dtype == torch.float32
    _close(f32, f64, rtol=1e-5, atol=1e-30)

@given(batches(), eps_values)
def test_decomposition_is_exact(lb, eps):
    l, b = lb
    d = fractional_decomposition(torch.tensor(l), torch.tensor(b), eps)
    _close(d.mean_ratio, 1 + d.relative_excess - d.eps_share, rtol=1e-9, atol=1e-9 * (1 + abs(d.relative_excess)))
    _close(d.eps_share, np.mean(eps / (b + eps)))

@given(st.integers(1, 30), st.sampled_from([1e-12, 1e-9, 1e-6]), st.sampled_from([1e-9, 1e-6, 1e-3]))
def test_base_near_zero_with_small_eps(n, b_scale, eps):
    b = np.linspace(0, 1, n) * b_scale
    l = np.full(n, 2.0)
    got = example_inverse_surprisal_weighted_reconstruction_loss(torch.tensor(l), torch.tensor(b), eps, 'none')
    assert torch.isfinite(got).all()
    _close(got, l / (b + eps))
    h = weight_health(1 / (torch.tensor(b) + eps), torch.tensor(b))
    assert 1 <= h.ess <= n + 1e-9 and 0 < h.lightest_decile_share <= 1

@given(batches(), reductions)
def test_distribution_level_is_ratio_of_means(lb, reduction):
    l, b = lb
    if b.mean() == 0: b = b + 1.0
    base_mean = dataset_base_mean(torch.tensor(b))
    _close(base_mean, b.mean())
    got = distribution_relative_reconstruction_loss(torch.tensor(l), base_mean, reduction)
    _close(got, _np_reduce(l / b.mean(), reduction))

@st.composite
def token_batches(draw):
    "(token_nll, base_token_surprisal, y_mask) arrays (bs, T), each example with >= 1 y token."
    bs, T = draw(st.integers(1, 6)), draw(st.integers(1, 10))
    mask = draw(arrays(np.bool_, (bs, T)))
    mask[np.arange(bs), draw(arrays(np.int64, bs, elements=st.integers(0, T - 1)))] = True
    vals = st.floats(0, 50, allow_nan=False)
    s = draw(arrays(np.float64, (bs, T), elements=vals))
    if draw(st.booleans()): s[0] = 0.0   # an example with zero base surprisal
    return draw(arrays(np.float64, (bs, T), elements=vals)), s, mask

def _np_share_weights(s, mask, mix):
    s = np.where(mask, s, 0.0)
    n, tot = mask.sum(1, keepdims=True), s.sum(1, keepdims=True)
    share = np.where(tot > 0, n * s / np.where(tot > 0, tot, 1.0), 1.0)
    return np.where(mask, mix * share + (1 - mix), 0.0)

@given(token_batches(), st.sampled_from([0.0, 0.3, 1.0]), reductions)
def test_token_share_matches_numpy(batch, mix, reduction):
    tok, s, mask = batch
    w = token_surprisal_share_weights(torch.tensor(s), torch.tensor(mask), mix)
    _close(w, _np_share_weights(s, mask, mix), atol=1e-12)
    _close(w.sum(1), mask.sum(1))   # mean weight 1 over the y tokens
    tt = torch.tensor(tok).requires_grad_()
    got = token_surprisal_share_reconstruction_loss(tt, torch.tensor(s), torch.tensor(mask), mix, reduction)
    want_w = _np_share_weights(s, mask, mix)
    _close(got.detach(), _np_reduce((want_w * tok).sum(1), reduction), atol=1e-12)
    got.sum().backward()
    _close(tt.grad, want_w / (mask.shape[0] if reduction == 'mean' else 1), atol=1e-12)

@given(token_batches())
def test_single_token_examples_get_weight_one(batch):
    _, s, _ = batch
    mask = np.zeros_like(s, dtype=bool); mask[:, -1] = True
    _close(token_surprisal_share_weights(torch.tensor(s), torch.tensor(mask)), mask.astype(float))

@given(st.integers(1, 5), st.integers(2, 8), st.integers(2, 30), st.sampled_from([torch.float32, torch.float64]))
def test_y_region_nll_matches_numpy(bs, T, V, dtype):
    g = torch.Generator().manual_seed(bs * 1000 + T * 10 + V)
    logits = torch.randn(bs, T, V, generator=g, dtype=torch.float64) * 3
    targets = torch.randint(0, V, (bs, T), generator=g)
    mask = torch.rand(bs, T, generator=g) < 0.5; mask[:, 0] = True
    lg = logits.numpy(); lse = np.log(np.exp(lg - lg.max(-1, keepdims=True)).sum(-1)) + lg.max(-1)
    ref = ((lse - np.take_along_axis(lg, targets.numpy()[..., None], -1)[..., 0]) * mask.numpy()).sum(1)
    lt = logits.to(dtype).requires_grad_()
    got = y_region_nll(lt, targets, mask)
    _close(got.detach(), ref, rtol=RTOL if dtype == torch.float64 else 1e-5, atol=0 if dtype == torch.float64 else 1e-6)
    got.sum().backward()
    p = np.exp(lg - lse[..., None]); onehot = np.eye(V)[targets.numpy()]
    _close(lt.grad, (p - onehot) * mask.numpy()[..., None], rtol=RTOL if dtype == torch.float64 else 1e-4, atol=1e-12 if dtype == torch.float64 else 1e-6)

L, B = torch.tensor([1.0, 2.0]), torch.tensor([0.5, 3.0])
M = torch.tensor([[False, True], [True, True]])
ERROR_CASES = [
    (lambda: example_inverse_surprisal_weighted_reconstruction_loss(L, B, 0), ValueError, "eps must be a finite number > 0"),
    (lambda: example_inverse_surprisal_weighted_reconstruction_loss(L, B, -1e-3), ValueError, "eps must be a finite number > 0"),
    (lambda: example_inverse_surprisal_weighted_reconstruction_loss(L, B, math.nan), ValueError, "eps must be a finite number > 0"),
    (lambda: example_inverse_surprisal_weighted_reconstruction_loss(L, B, torch.ones(2)), ValueError, "eps must be a scalar"),
    (lambda: example_inverse_surprisal_weighted_reconstruction_loss(L, B, '0.1'), TypeError, "eps must be a number"),
    (lambda: example_inverse_surprisal_weighted_reconstruction_loss(L, -B, 0.1), ValueError, "base_surprisal must be >= 0"),
    (lambda: example_inverse_surprisal_weighted_reconstruction_loss(L, B * math.inf, 0.1), ValueError, "base_surprisal must be finite"),
    (lambda: example_inverse_surprisal_weighted_reconstruction_loss(L * math.nan, B, 0.1), ValueError, "recon_nll must be finite"),
    (lambda: example_inverse_surprisal_weighted_reconstruction_loss(L, B[:1], 0.1), ValueError, "recon_nll has shape (2,) but base_surprisal has shape (1,)"),
    (lambda: example_inverse_surprisal_weighted_reconstruction_loss(L, B, 0.1, 'max'), ValueError, "reduction must be one of"),
    (lambda: example_inverse_surprisal_weighted_reconstruction_loss(L.tolist(), B, 0.1), TypeError, "recon_nll must be a torch.Tensor"),
    (lambda: distribution_relative_reconstruction_loss(L, 0.0), ValueError, "base_mean must be a finite number > 0"),
    (lambda: distribution_relative_reconstruction_loss(L, math.inf), ValueError, "base_mean must be a finite number > 0"),
    (lambda: distribution_relative_reconstruction_loss(L * math.nan, 1.0), ValueError, "recon_nll must be finite"),
    (lambda: distribution_relative_reconstruction_loss(L, 1.0, 'avg'), ValueError, "reduction must be one of"),
    (lambda: dataset_base_mean(torch.zeros(0)), ValueError, "base_surprisal must hold at least one example"),
    (lambda: token_surprisal_share_weights(torch.ones(2, 2), M, mix=2), ValueError, "mix must be in [0, 1]"),
    (lambda: token_surprisal_share_weights(-torch.ones(2, 2), M), ValueError, "base_token_surprisal must be >= 0"),
    (lambda: token_surprisal_share_weights(torch.ones(2, 2), M & False), ValueError, "y_mask has no y token in example(s) [0, 1]"),
    (lambda: token_surprisal_share_weights(torch.ones(2, 3), M), ValueError, "y_mask has shape (2, 2), expected (2, 3)"),
    (lambda: token_surprisal_share_reconstruction_loss(torch.ones(2, 2), torch.ones(2, 2), M, reduction='x'), ValueError, "reduction must be one of"),
    (lambda: y_region_nll(torch.zeros(2, 2, 3), torch.zeros(2, 2, dtype=torch.long), M & False), ValueError, "no y token in example(s) [0, 1]"),
    (lambda: y_region_nll(torch.zeros(2, 2), torch.zeros(2, 2, dtype=torch.long), M), ValueError, "logits must have 3 dimension(s)"),
    (lambda: y_region_nll(torch.zeros(2, 2, 3), torch.full((2, 2), 3), M), ValueError, "targets must be in [0, 3)"),
    (lambda: fractional_gain(L, torch.zeros(2)), ValueError, "base_surprisal + eps is 0 at index [0]"),
    (lambda: effective_beta(-0.5, B, 0.1), ValueError, "beta must be a finite number >= 0"),
    (lambda: weight_health(torch.zeros(2), B), ValueError, "weights must not all be 0"),
]

@pytest.mark.parametrize('call,exc,message', ERROR_CASES)
def test_error_cases(call, exc, message):
    with pytest.raises(exc) as info: call()
    assert message in str(info.value)
