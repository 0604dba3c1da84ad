"Both CVAE families: configuration errors, the exact/Gumbel switch, free bits against the true KL, generation."
import pytest
import torch

from inverse_surprisal.continuous_cvae import ContinuousCVAE, ContinuousCVAEConfig
from inverse_surprisal.objective import ObjectiveConfig
from inverse_surprisal.shared_discrete_cvae import SharedDiscreteCVAE, SharedDiscreteCVAEConfig
from inverse_surprisal.synthetic import SyntheticDataset, SyntheticTask

TASK = SyntheticTask(vocab_size=6, length=4, n_rotations=2)
DS = SyntheticDataset(TASK, 16, seed=0)
T = DS.input_ids.shape[1]
ARCH = dict(y_len=TASK.length, d_model=16, n_layers=1, n_heads=2)

def discrete(**kw):
    torch.manual_seed(0)
    return SharedDiscreteCVAE(SharedDiscreteCVAEConfig(TASK.n_tokens, T, **{**ARCH, **kw}), ObjectiveConfig(free_bits=0.3))

def continuous(**kw):
    torch.manual_seed(0)
    return ContinuousCVAE(ContinuousCVAEConfig(TASK.n_tokens, T, **{**ARCH, **kw}), ObjectiveConfig(recon='plain'))

@pytest.mark.parametrize('make,kw,msg', [
    (lambda **k: SharedDiscreteCVAEConfig(10, 18, y_len=8, **k), dict(code_sizes=(4, 1)), "code_sizes must be one or more ints >= 2"),
    (lambda **k: SharedDiscreteCVAEConfig(10, 18, y_len=8, **k), dict(prior='learned'), "prior must be 'conditional' or 'uniform'"),
    (lambda **k: SharedDiscreteCVAEConfig(10, 18, y_len=8, **k), dict(tau_min=2.0), "tau_min <= tau_start"),
    (lambda **k: ContinuousCVAEConfig(10, 18, y_len=8, **k), dict(n_samples=0), "n_samples must be an int >= 1"),
    (lambda **k: ObjectiveConfig(**k), dict(beta=-0.1), "beta must be a finite number >= 0"),
    (lambda **k: ObjectiveConfig(**k), dict(eps=0.0), "eps must be a finite number > 0"),
    (lambda **k: ObjectiveConfig(**k), dict(recon='mutual-information'), "recon must be one of"),
])
def test_configuration_errors(make, kw, msg):
    with pytest.raises(ValueError, match=msg.replace('(', r'\(').replace(')', r'\)')): make(**kw)

@pytest.mark.parametrize('model', [discrete, continuous])
def test_data_that_does_not_match(model):
    m = model()
    with pytest.raises(ValueError, match="input_ids must have shape"): m(DS.input_ids[:, 1:], DS.y_mask[:, 1:], DS.oracle_base_surprisal)
    with pytest.raises(ValueError, match="input_ids must be in"): m(DS.input_ids + TASK.n_tokens, DS.y_mask, DS.oracle_base_surprisal)
    with pytest.raises(ValueError, match="base_surprisal must have shape"): m(DS.input_ids, DS.y_mask, DS.oracle_base_surprisal[:3])

def test_exact_below_threshold_gumbel_above():
    assert discrete()(DS.input_ids, DS.y_mask, DS.oracle_base_surprisal).extras['exact']
    out = discrete(exact_max_classes=4)(DS.input_ids, DS.y_mask, DS.oracle_base_surprisal, step=500)
    assert not out.extras['exact'] and all(oh.sum(1).eq(1).all() for oh in out.extras['sample'])

def test_free_bits_report_the_true_kl():
    m = discrete(code_sizes=(3, 2))
    out = m(DS.input_ids, DS.y_mask, DS.oracle_base_surprisal)
    # the KL over the joint classes, enumerated, equals the sum of the per-code KLs the model reports (the codes are
    # independent under both q and p)
    log_qc, log_pc = m.joint_log_prob(out.extras['log_q']), m.joint_log_prob(out.extras['log_p'])
    assert torch.allclose(out.kl, (log_qc.exp() * (log_qc - log_pc)).sum(1), atol=1e-5)
    floored = out.kl_units.mean(0).clamp_min(0.3).sum()
    assert torch.allclose(out.loss, out.recon_term.mean() + out.beta * floored + 0 * out.aux.mean(), atol=1e-5)

@pytest.mark.parametrize('model', [discrete, continuous])
@pytest.mark.parametrize('source', ['prior', 'posterior'])
def test_generation(model, source):
    y = model().generate(DS.input_ids, DS.y_mask, source, generator=torch.Generator().manual_seed(0))
    assert y.shape == (16, TASK.length) and y.min() >= 0 and y.max() < TASK.n_tokens

@pytest.mark.parametrize('model', [discrete, continuous])
def test_a_few_steps_reduce_the_loss(model):
    m = model(); opt = torch.optim.Adam(m.parameters(), lr=3e-3)
    first = None
    for step in range(15):
        out = m(DS.input_ids, DS.y_mask, DS.oracle_base_surprisal, step=step)
        opt.zero_grad(); out.loss.backward(); opt.step()
        first = first if first is not None else out.loss.item()
        assert torch.isfinite(out.loss)
    assert out.loss.item() < first
