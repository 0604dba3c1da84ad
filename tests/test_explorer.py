"The explorer's update step runs headless, and the widget's controls are wired to it."
import matplotlib
matplotlib.use('Agg')
import numpy as np
import pytest

from inverse_surprisal.explorer import Explorer, explorer_state, widget
from inverse_surprisal.synthetic import VARIANTS

@pytest.mark.parametrize('variant', VARIANTS)
def test_update_draws_every_variant(variant):
    ex = Explorer(n=300)
    st = ex.update(variant, eps=0.5, beta=2.0, noise_levels=(0.1, 0.3, 0.6))
    assert st.variant == variant and len(ex.fig.axes) == 4
    assert all(ax.has_data() for ax in ex.fig.axes)
    for a in (st.weights, st.beta_eff, st.rate, st.gain, st.eps_share): assert np.isfinite(a).all()
    assert (st.rate >= -1e-12).all() and (st.rate <= np.log(12) + 1e-9).all()

def test_update_matches_the_state_function():
    ex = Explorer(n=200, seed=3)
    st = ex.update('example', eps=0.2, beta=1.5)
    ref = explorer_state('example', eps=0.2, beta=1.5, n=200, seed=3)
    np.testing.assert_allclose(st.rate, ref.rate, rtol=0, atol=0)

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
