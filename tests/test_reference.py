"The reference module against a Hugging Face GPT-2 built offline, the cache's guarantees, and a 2-process run."
import json, os, re, subprocess, sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Subset

from inverse_surprisal import files
from inverse_surprisal.cache import (BaseSurprisalCache, WithBaseSurprisal, build_cache, example_fingerprint,
                                     score_dataset, scoring_provenance)
from inverse_surprisal.cache_file import CacheError, StaleCacheError
from inverse_surprisal.reference import FrozenBaseModel, score_batch

transformers = pytest.importorskip('transformers')
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))   # for dist_score.model_and_data

@pytest.fixture(scope='module')
def gpt2():
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=97, n_positions=32, n_embd=32, n_layer=2, n_head=4,
                                  bos_token_id=0, eos_token_id=0, resid_pdrop=0.3, embd_pdrop=0.3, attn_pdrop=0.3)
    return transformers.GPT2LMHeadModel(cfg)

@pytest.fixture(scope='module')
def padded_batch():
    "Right-padded batch with an attention mask and a different y region per example."
    g = torch.Generator().manual_seed(1)
    lengths, y_starts = [9, 6, 12], [4, 1, 7]
    ids = torch.zeros(3, 12, dtype=torch.long); att = torch.zeros(3, 12, dtype=torch.long); y = torch.zeros(3, 12, dtype=torch.bool)
    for i, (T, s) in enumerate(zip(lengths, y_starts)):
        ids[i, :T] = torch.randint(1, 97, (T,), generator=g); att[i, :T] = 1; y[i, s:T] = True
    return ids, att, y

def hf_loss(gpt2, ids, att, where):
    "Hugging Face's own `labels` loss (a mean over the marked tokens) with labels only where `where` (bs,T) is True."
    with torch.no_grad(): return gpt2(input_ids=ids, attention_mask=att, labels=ids.masked_fill(~where, -100)).loss

def assert_b_equals_hf(gpt2, ids, att, y, got):
    "Each example's b equals Hugging Face's loss over its y tokens times their count, each token's its loss alone."
    gpt2.eval()
    for i in range(len(ids)):
        only = torch.zeros_like(y); only[i] = y[i]
        torch.testing.assert_close(got.b[i], hf_loss(gpt2, ids, att, only) * y[i].sum(), rtol=1e-5, atol=1e-5)
        for t in y[i].nonzero().flatten().tolist():
            one = torch.zeros_like(y); one[i, t] = True
            torch.testing.assert_close(got.token[i, t], hf_loss(gpt2, ids, att, one), rtol=1e-5, atol=1e-5)
    assert (got.token[~y] == 0).all()

def test_equals_hugging_face_masked_loss(gpt2, padded_batch):
    ids, att, y = padded_batch
    gpt2.train()                                             # left in train mode with dropout: b must not care
    got = score_batch(gpt2, ids, y, attention_mask=att)
    assert gpt2.training
    assert_b_equals_hf(gpt2, ids, att, y, got)

def left_padded(ids, att, y):
    "The same examples with their padding moved to the left."
    out = [torch.zeros_like(t) for t in (ids, att, y)]
    for i in range(len(ids)):
        n = int(att[i].sum())
        for o, t in zip(out, (ids, att, y)): o[i, -n:] = t[i, :n]
    return out

def test_left_padding_gets_position_ids(gpt2, padded_batch):
    "Left- and right-padded batches score alike (GPT-2 reads learned positions: without position_ids, left padding shifts them)."
    ids, att, y = padded_batch
    right = score_batch(gpt2, ids, y, attention_mask=att)
    lids, latt, ly = left_padded(ids, att, y)
    left = score_batch(gpt2, lids, ly, attention_mask=latt)
    torch.testing.assert_close(left.b, right.b, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(left.token[ly], right.token[y], rtol=1e-5, atol=1e-5)
    alone = torch.cat([score_batch(gpt2, ids[i:i + 1, :int(att[i].sum())], y[i:i + 1, :int(att[i].sum())]).b for i in range(3)])
    torch.testing.assert_close(left.b, alone, rtol=1e-5, atol=1e-5)
    gpt2.eval()
    with torch.no_grad():                                        # what the position ids fix: the model called without them
        shifted = gpt2(input_ids=lids, attention_mask=latt).logits.log_softmax(-1)[:, :-1].gather(2, lids[:, 1:, None])[..., 0]
    assert (-(shifted * ly[:, 1:]).sum(1) - right.b).abs().max() > 1e-3
    frozen = score_batch(FrozenBaseModel(gpt2), lids, ly, attention_mask=latt)   # through the frozen wrapper too
    torch.testing.assert_close(frozen.b, right.b, rtol=1e-5, atol=1e-5)

def test_hugging_face_style_batches_and_items(gpt2, padded_batch):
    "input_ids, attention_mask and labels (-100 off y) are accepted for a batch and for dataset items."
    ids, att, y = padded_batch
    labels = ids.masked_fill(~y, -100)
    want = score_batch(gpt2, ids, y, attention_mask=att)
    got = score_batch(gpt2, **dict(input_ids=ids, attention_mask=att, labels=labels))
    torch.testing.assert_close(got.b, want.b, rtol=0, atol=0)
    lids, latt, ly = left_padded(ids, att, y)
    items = [dict(input_ids=r, attention_mask=a, labels=r.masked_fill(~m, -100)) for r, a, m in zip(lids, latt, ly)]
    scored = score_dataset(gpt2, items, batch_size=2, progress=False)
    np.testing.assert_allclose(scored.b, want.b.double().numpy(), rtol=1e-5)
    with pytest.raises(ValueError, match=re.escape("give exactly one of y_mask and labels")):
        score_batch(gpt2, ids, y, attention_mask=att, labels=labels)
    with pytest.raises(ValueError, match=re.escape("labels must be -100 or equal input_ids (the model scores input_ids), differ at [0, 4]")):
        score_batch(gpt2, ids, attention_mask=att, labels=labels.masked_fill(y, 1))
    with pytest.raises(ValueError, match=re.escape("dataset item 0 must have the key 'input_ids' and one of 'y_mask' and 'labels'")):
        score_dataset(gpt2, [dict(input_ids=ids[0], y_mask=y[0], labels=labels[0])], progress=False)

def test_each_module_keeps_its_mode(gpt2, padded_batch):
    "Scoring runs in eval mode and gives every module back its own mode, a mixed one included."
    ids, att, y = padded_batch
    gpt2.train(); gpt2.transformer.h[0].eval()
    before = [m.training for m in gpt2.modules()]
    score_batch(gpt2, ids, y, attention_mask=att)
    assert [m.training for m in gpt2.modules()] == before and not gpt2.transformer.h[0].training

def test_train_mode_dropout_is_deterministic(gpt2, padded_batch):
    ids, att, y = padded_batch
    gpt2.train()
    runs = [score_batch(gpt2, ids, y, attention_mask=att).b for _ in range(3)]
    assert all(torch.equal(runs[0], r) for r in runs[1:])

def test_dataset_scoring_matches_one_by_one(gpt2, padded_batch):
    ids, att, y = padded_batch
    data = [{'input_ids': ids[i, :int(att[i].sum())], 'y_mask': y[i, :int(att[i].sum())]} for i in range(3)] * 5
    scored = score_dataset(gpt2, data, batch_size=4, progress=False)
    alone = torch.cat([score_batch(gpt2, d['input_ids'][None], d['y_mask'][None]).b for d in data])
    np.testing.assert_allclose(scored.b, alone.double().numpy(), rtol=1e-5)
    batch = score_batch(gpt2, ids, y, attention_mask=att)
    np.testing.assert_allclose(scored.b[:3], batch.b.double().numpy(), rtol=1e-5)

def test_bf16_model_scored_in_float32(gpt2, padded_batch):
    "A bf16 model's logits are log-softmaxed in float32: b matches a float64 log-softmax of them, which bf16 would not."
    ids, att, y = padded_batch
    low = transformers.GPT2LMHeadModel(gpt2.config); low.load_state_dict(gpt2.state_dict()); low = low.bfloat16().eval()
    got = score_batch(low, ids, y, attention_mask=att)
    with torch.no_grad(): logits = low(input_ids=ids, attention_mask=att).logits
    b_of = lambda logp: -(logp[:, :-1].gather(-1, ids[:, 1:, None])[..., 0] * y[:, 1:]).sum(1)
    wide, narrow = b_of(logits.double().log_softmax(-1)), b_of(logits.log_softmax(-1).double())
    assert got.b.dtype == torch.float32
    torch.testing.assert_close(got.b.double(), wide, rtol=1e-5, atol=1e-4)
    assert (narrow - wide).abs().max() > 1e-3                  # the same sums in bf16 are visibly off: the check can fail

def _toy(seed=0, n=40, vocab=11):
    from dist_score import model_and_data
    return model_and_data(seed, n, vocab)

@pytest.fixture()
def built(tmp_path):
    model, data = _toy()
    base = FrozenBaseModel(model)
    cache = build_cache(base, data, tmp_path / 'b.iscache', batch_size=8, progress=False)
    return base, data, cache, tmp_path / 'b.iscache'

def test_round_trip_shuffle_and_subset(built):
    base, data, cache, path = built
    reopened = BaseSurprisalCache(path, scoring_provenance(base))
    fps = [example_fingerprint(d['input_ids'], d['y_mask']) for d in data]
    direct = torch.cat([score_batch(base, d['input_ids'][None], d['y_mask'][None]).b for d in data]).double()
    torch.testing.assert_close(reopened.lookup(fps), direct, rtol=1e-6, atol=1e-6)
    served = WithBaseSurprisal(data, reopened)
    sub = Subset(served, list(range(3, 40, 4)))
    for item in DataLoader(sub, batch_size=1, shuffle=True, generator=torch.Generator().manual_seed(0)):
        i = next(j for j, d in enumerate(data) if torch.equal(d['input_ids'], item['input_ids'][0]) and torch.equal(d['y_mask'], item['y_mask'][0]))
        torch.testing.assert_close(item['base_surprisal'][0], direct[i], rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(item['base_token_surprisal'][0].sum().double(), direct[i], rtol=1e-5, atol=1e-5)

def test_tampered_file_detected(built):
    _, _, cache, path = built
    raw = bytearray(path.read_bytes())
    raw[raw.find(np.asarray(cache.b).tobytes()) + 3] ^= 0x10
    path.write_bytes(bytes(raw))
    with pytest.raises(CacheError, match="fails its checksum"): BaseSurprisalCache(path)
    path.write_bytes(bytes(raw[:len(raw) // 2]))
    with pytest.raises(CacheError, match="truncated"): BaseSurprisalCache(path, verify=False)
    path.write_bytes(b'not a cache')
    with pytest.raises(CacheError, match="bad magic bytes"): BaseSurprisalCache(path)

def test_stale_provenance_detected(built):
    base, data, _, path = built
    other = FrozenBaseModel(_toy(seed=1)[0])
    with pytest.raises(StaleCacheError, match=r"differs in \['model'\]"): BaseSurprisalCache(path, scoring_provenance(other))
    with pytest.raises(StaleCacheError): build_cache(other, data, path, on_stale='error', progress=False)
    with pytest.raises(StaleCacheError, match=r"pad_id"): BaseSurprisalCache(path, scoring_provenance(base, pad_id=5))

def test_interrupted_write_leaves_old_file(built, monkeypatch):
    base, data, cache, path = built
    before = path.read_bytes()
    def crash(fd): raise OSError("disk went away")
    monkeypatch.setattr(files.os, 'fsync', crash)
    more = data + [{'input_ids': torch.tensor([1, 2, 3, 4]), 'y_mask': torch.tensor([False, False, True, True])}]
    with pytest.raises(OSError, match="disk went away"): build_cache(base, more, path, progress=False)
    assert path.read_bytes() == before                        # the old cache, whole
    # no partial file left behind (the lock file stays beside the cache, as a run's does)
    assert sorted(p.name for p in path.parent.iterdir()) == [f'.{path.name}.lock', path.name]
    monkeypatch.undo()
    assert len(BaseSurprisalCache(path)) == len(cache)

def test_killed_writer_leaves_no_cache(tmp_path):
    "A writer killed mid-write (SIGKILL) leaves only a temporary file that no reader opens."
    code = ("import numpy as np, os, signal; from inverse_surprisal import cache_file as r, files\n"
            "def die(fd): os.kill(os.getpid(), signal.SIGKILL)\n"
            "files.os.fsync = die\n"
            f"r._write_cache_file(r.Path({str(tmp_path / 'b.iscache')!r}), {{'provenance': {{}}}}, {{'a': np.arange(1e6)}})\n")
    res = subprocess.run([sys.executable, '-c', code])
    assert res.returncode == -9
    assert not (tmp_path / 'b.iscache').exists()

def test_two_processes_equal_one(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(HERE) + os.pathsep + os.environ.get('PYTHONPATH', ''), OMP_NUM_THREADS='1')
    one = subprocess.run([sys.executable, str(HERE / 'dist_score.py'), str(tmp_path / 'one')], env=env, capture_output=True, text=True)
    assert one.returncode == 0, one.stderr[-3000:]
    two = subprocess.run([sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', '2',
                          str(HERE / 'dist_score.py'), str(tmp_path / 'two')], env=env, capture_output=True, text=True, timeout=300)
    assert two.returncode == 0, two.stderr[-3000:]
    a, b = BaseSurprisalCache(tmp_path / 'one' / 'b.iscache'), BaseSurprisalCache(tmp_path / 'two' / 'b.iscache')
    assert np.array_equal(a.keys, b.keys) and np.array_equal(a.offsets, b.offsets)
    np.testing.assert_allclose(a.b, b.b, rtol=1e-6); np.testing.assert_allclose(a.token, b.token, rtol=1e-6)
    r0, r1, single = (json.loads((tmp_path / d / f).read_text()) for d, f in (('two', 'rank0.json'), ('two', 'rank1.json'), ('one', 'rank0.json')))
    assert r0 == r1                                           # every rank: the same cache and the same E_D[b]
    assert r0['n'] == single['n']
    np.testing.assert_allclose(r0['base_mean'], single['base_mean'], rtol=1e-6)   # the mean of b, float32 as above

def test_ids_checked_against_the_vocabulary_before_the_call(gpt2, padded_batch):
    "An id at or past the vocabulary (or negative) is a ValueError naming it, not an IndexError from inside the model."
    ids, att, y = padded_batch
    for bad_id, where in ((97, [1, 2]), (-1, [0, 5])):
        bad = ids.clone(); bad[tuple(where)] = bad_id
        msg = f"input_ids must be in [0, 97) for this model, got {bad_id} at (example, position) {where}"
        with pytest.raises(ValueError, match=re.escape(msg)): score_batch(gpt2, bad, y, attention_mask=att)
    from inverse_surprisal.nn import CausalTransformer
    for model in (CausalTransformer(10, 12), FrozenBaseModel(CausalTransformer(10, 12))):
        with pytest.raises(ValueError, match=re.escape("input_ids must be in [0, 10)")): score_batch(model, ids, y)

def test_output_layer_only_from_the_first_y_token(gpt2, padded_batch):
    "With y late in every example, the model is asked for the logits of the span's tail only, without a key/value cache."
    ids, att, _ = padded_batch
    y = torch.zeros_like(att, dtype=torch.bool)
    for i, n in enumerate(att.sum(1).tolist()): y[i, 5:n] = True   # the first y token is at position 5 in every example
    rows, caches = [], []
    hook = gpt2.lm_head.register_forward_hook(lambda m, inp, out: rows.append(inp[0].shape[1]))
    pre = gpt2.register_forward_pre_hook(lambda m, a, kw: caches.append(kw.get('use_cache')), with_kwargs=True)
    try: got = score_batch(gpt2, ids, y, attention_mask=att)
    finally: hook.remove(); pre.remove()
    assert rows == [ids.shape[1] - 4] and caches == [False]      # logits at positions 4..11 score the tokens at 5..12
    assert_b_equals_hf(gpt2, ids, att, y, got)
