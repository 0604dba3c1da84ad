"The synthetic oracle by enumeration and by sampling, and the metrics against scipy, scikit-learn and brute force."
import itertools, math, sys

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from inverse_surprisal.metrics import (categorical_kl, code_usage, hungarian, linear_assignment, matched_accuracy, mig,
                                       mutual_information, normalized_mutual_information)
from inverse_surprisal.synthetic import SyntheticDataset, SyntheticTask, variant_weights

TINY = SyntheticTask(vocab_size=3, length=3, noise_levels=(0.1, 0.5, 1.0), n_rotations=2)
ALL_Y = torch.tensor(list(itertools.product(range(3), repeat=3)))

def test_enumeration_sums_to_one():
    for x in TINY.sample(6, seed=0).x:
        X = x.expand(len(ALL_Y), -1)
        b = TINY.marginal_nll(X, ALL_Y)
        assert torch.isclose(torch.exp(-b).sum(), torch.tensor(1.0, dtype=torch.float64), atol=1e-12)
        assert torch.allclose(TINY.posterior(X, ALL_Y).sum(1), torch.ones(len(ALL_Y), dtype=torch.float64), atol=1e-12)
        assert torch.allclose(TINY.token_marginal_nll(X, ALL_Y).sum(1), b, atol=1e-10)
        info = TINY.information(X, ALL_Y)
        assert (info >= -1e-12).all() and (info <= math.log(TINY.n_classes) + 1e-12).all()

def test_sampler_frequencies_match_exact_likelihood():
    "Empirical p(y | x) over many draws with one fixed content against exp(-b*)."
    task = SyntheticTask(vocab_size=3, length=3, noise_levels=(0.3,), n_rotations=2)
    n = 200_000
    b = task.sample(n, seed=5)
    x0 = b.x[0]
    same_x = (b.x == x0).all(1)
    ys = b.y[same_x]
    assert len(ys) > 2000
    codes = (ys * torch.tensor([9, 3, 1])).sum(1)
    freq = torch.bincount(codes, minlength=27).double() / len(ys)
    exact = torch.exp(-task.marginal_nll(x0.expand(27, -1), ALL_Y))
    se = torch.sqrt(exact * (1 - exact) / len(ys))
    assert ((freq - exact).abs() <= 5 * se + 1e-9).all(), (freq - exact).abs().max()

def test_tempered_posterior_limits():
    b = TINY.sample(50, seed=1)
    b_star = TINY.marginal_nll(b.x, b.y)
    tp = TINY.tempered_posterior(b.x, b.y, 2.0, 2.0)
    assert torch.allclose(tp.q, TINY.posterior(b.x, b.y), atol=1e-12)
    cold = TINY.tempered_posterior(b.x, b.y, 1.0, 1e3)           # rate priced out: q -> prior, no rate
    assert cold.rate.max() < 1e-3
    ex = TINY.tempered_posterior(b.x, b.y, variant_weights('example', b_star, 0.1), 0.5)
    assert torch.isfinite(ex.rate).all() and (ex.rate >= -1e-12).all()

def test_dataset_and_errors():
    ds = SyntheticDataset(TINY, 10, seed=0)
    assert len(ds) == 10 and ds[3]['input_ids'].shape == (8,)
    with pytest.raises(ValueError, match="noise_levels must be"): SyntheticTask(noise_levels=(0.0,))
    with pytest.raises(ValueError, match="n_rotations must be"): SyntheticTask(length=4, n_rotations=5)
    with pytest.raises(ValueError, match="transforms must be"): SyntheticTask(transforms=('flip',))
    with pytest.raises(ValueError, match="difficulty_probs must be"): SyntheticTask(difficulty_probs=(0.5, 0.5))
    with pytest.raises(ValueError, match=r"x must have shape \(n, 4\)"): TINY.marginal_nll(torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="difficulty tags"): TINY.marginal_nll(torch.zeros(2, 4, dtype=torch.long), torch.zeros(2, 3, dtype=torch.long))

@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7), st.integers(1, 7), st.integers(0, 10_000))
def test_linear_assignment_matches_scipy(n, m, seed):
    from scipy.optimize import linear_sum_assignment
    cost = np.random.default_rng(seed).integers(0, 20, (n, m)).astype(float)
    r, c = linear_sum_assignment(cost)
    for pairs in (linear_assignment(cost), hungarian(cost)):           # scipy's, and the numpy fallback without scipy
        assert len(pairs) == min(n, m)
        assert len(set(pairs[:, 0])) == len(pairs) and len(set(pairs[:, 1])) == len(pairs)
        assert cost[pairs[:, 0], pairs[:, 1]].sum() == cost[r, c].sum()

def test_linear_assignment_without_scipy(monkeypatch):
    "The core package does not require scipy: without it the matching is the numpy Hungarian algorithm."
    monkeypatch.setitem(sys.modules, 'scipy.optimize', None)             # `from scipy.optimize import ...` now fails
    cost = np.random.default_rng(0).random((9, 6))
    np.testing.assert_array_equal(linear_assignment(cost), hungarian(cost))

@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5), st.integers(2, 5), st.integers(0, 10_000))
def test_mi_nmi_match_sklearn(k, f, seed):
    from sklearn.metrics import mutual_info_score, normalized_mutual_info_score
    rng = np.random.default_rng(seed)
    factor = rng.integers(0, f, 300); factor[:f] = np.arange(f)
    code = np.where(rng.random(300) < 0.6, factor % k, rng.integers(0, k, 300))
    assert math.isclose(mutual_information(torch.tensor(code), torch.tensor(factor)), mutual_info_score(factor, code), abs_tol=1e-12)
    assert math.isclose(normalized_mutual_information(torch.tensor(code), torch.tensor(factor)), normalized_mutual_info_score(factor, code), abs_tol=1e-12)

def test_matched_accuracy_brute_force():
    rng = np.random.default_rng(0)
    factor = rng.integers(0, 4, 500); code = np.where(rng.random(500) < 0.7, (factor + 1) % 4, rng.integers(0, 4, 500))
    best = max(np.mean(np.array(p)[code] == factor) for p in itertools.permutations(range(4)))
    assert math.isclose(matched_accuracy(torch.tensor(code), torch.tensor(factor)), best, abs_tol=1e-12)

def test_hand_built_codes():
    f = torch.arange(1200) % 4
    assert normalized_mutual_information((f + 2) % 4, f) == pytest.approx(1.0)
    assert matched_accuracy((f + 2) % 4, f) == pytest.approx(1.0)
    indep = torch.randint(0, 4, (1200,), generator=torch.Generator().manual_seed(0))
    assert normalized_mutual_information(indep, f) < 0.02
    factors = torch.stack([f, torch.arange(1200) // 4 % 3], 1)
    assert mig([factors[:, 0], factors[:, 1]], factors) == pytest.approx(1.0)
    q = torch.softmax(torch.randn(50, 4, dtype=torch.float64), 1)
    kl = categorical_kl(q, torch.full((4,), 0.25))
    assert (kl >= 0).all() and torch.allclose(kl, (q * (q * 4).log()).sum(1))
    assert code_usage(torch.nn.functional.one_hot(f).double()).active == 4
