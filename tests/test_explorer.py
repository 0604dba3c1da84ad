"The explorer's update step runs headless, and the widget's controls are wired to it."
import matplotlib
matplotlib.use('Agg')
import numpy as np
import pytest

from inverse_surprisal.explorer import Explorer, explorer_state, widget
from inverse_surprisal.losses import RECON_TERMS

@pytest.mark.parametrize('variant', RECON_TERMS)
def test_update_draws_every_variant(variant):
    ex = Explorer(n=300)
    st = ex.update(variant, eps=0.5, beta=2.0, noise_levels=(0.1, 0.3, 0.6))
    assert st.variant == variant and len(ex.fig.axes) == 4
    assert all(ax.has_data() for ax in ex.fig.axes)
    for a in (st.weights, st.beta_eff, st.rate, st.gain, st.eps_share): assert np.isfinite(a).all()
    assert (st.rate >= -1e-12).all() and (st.rate <= np.log(12) + 1e-9).all()

def test_the_figure_shows_the_state():
    "The panels draw the state's own numbers: normalised weights, the eps marker, the variant's rate beside the plain one."
    ex = Explorer(n=200, seed=3)
    st = ex.update('example', eps=0.2, beta=1.5)
    weights, prices, dropped, rates = ex.fig.axes
    np.testing.assert_allclose(weights.collections[0].get_offsets()[:, 1], st.weights / st.weights.mean())
    np.testing.assert_allclose(prices.patches[0].get_height() + sum(p.get_height() for p in prices.patches[1:]), len(st.beta_eff))
    assert dropped.lines[1].get_xdata()[0] == 0.2
    np.testing.assert_allclose(rates.collections[0].get_offsets()[:, 1], st.plain_rate)
    np.testing.assert_allclose(rates.collections[1].get_offsets()[:, 1], st.rate)

def test_plain_variant_is_the_unweighted_loss():
    "plain: every weight 1, the full sample size, the price on rate beta for every example, and the plain rate itself."
    st = explorer_state('plain', eps=0.3, beta=2.0, n=300, seed=1)
    assert (st.weights == 1).all() and st.ess_fraction == 1.0 and st.max_weight == 1.0
    np.testing.assert_allclose(st.beta_eff, 2.0)
    np.testing.assert_allclose(st.rate, st.plain_rate)

def test_widget_controls_call_update():
    ex = Explorer(n=200)
    box = widget(ex)
    variant, eps, beta = box.children[0].children
    noise = box.children[1].children
    assert ex.state.variant == 'example'                     # drawn once on creation
    variant.value = 'token'
    assert ex.state.variant == 'token'
    eps.value, beta.value, noise[2].value = 1.0, 10.0, 0.3
    assert (ex.state.eps, ex.state.beta, ex.state.noise_levels[2]) == (1.0, 10.0, 0.3)
