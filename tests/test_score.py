"`inverse-surprisal score` on a generated JSONL with a locally saved tiny GPT-2: b against Hugging Face's loss, resume, provenance, refusals, torchrun."
import json, os, sys

import numpy as np
import pytest
import torch

from runs import BIN, cli, run
import inverse_surprisal.score as score

transformers = pytest.importorskip('transformers')
pq = pytest.importorskip('pyarrow.parquet')
CLI = [BIN / 'inverse-surprisal', 'score']

def hf_b(saved):
    "b of every pair from the model's own labels loss (a mean over the scored tokens) times the y-token count."
    from inverse_surprisal.text import TextPairs, load_tokenizer, read_pairs
    model = transformers.AutoModelForCausalLM.from_pretrained(saved / 'base', local_files_only=True).eval()
    data = TextPairs(read_pairs(saved / 'pairs.jsonl'), load_tokenizer(saved / 'base'))
    with torch.no_grad():
        return [model(input_ids=it['input_ids'][None], labels=it['input_ids'].masked_fill(~it['y_mask'], -100)[None]).loss.item()
                * int(it['y_mask'].sum()) for it in data]

def test_cli_scores_equal_hugging_face_loss(saved, tmp_path):
    res = cli('score', '--data', saved / 'pairs.jsonl', '--base-model', saved / 'base', '--out', tmp_path / 's.parquet', '--tokens', '--no-progress')
    assert 'scored 40 pairs (40 new to the cache' in res.stdout and 'tokens/s' in res.stdout
    t = pq.read_table(tmp_path / 's.parquet').to_pydict()
    assert t['pair'] == list(range(40))
    np.testing.assert_allclose(t['b'], hf_b(saved), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose([sum(s) for s in t['token_surprisal']], t['b'], rtol=1e-5)
    assert [len(s) for s in t['token_surprisal']] == t['n_y_tokens']
    # a second call reads the cache: nothing is scored again, the same table
    res = cli('score', '--data', saved / 'pairs.jsonl', '--base-model', saved / 'base', '--out', tmp_path / 's.csv', '--cache', tmp_path / 's.iscache', '--no-progress')
    assert '(0 new to the cache' in res.stdout
    import csv
    np.testing.assert_array_equal([float(r['b']) for r in csv.DictReader(open(tmp_path / 's.csv'))], t['b'])

def test_killed_call_resumes(saved, tmp_path, monkeypatch):
    "Killed in its second part of 16 pairs (the cache written after each): the cache holds the first, the next call scores only the rest."
    import inverse_surprisal.cache as cache
    real, calls = cache._score_flat, []
    def killed_in_second(*a, **k):
        calls.append(len(a[2]))
        if len(calls) == 2: raise KeyboardInterrupt
        return real(*a, **k)
    monkeypatch.setattr(cache, '_score_flat', killed_in_second)
    parts = lambda f: (lambda *a, **k: f(*a, **dict(k, part=16)))
    monkeypatch.setattr(score, 'build_cache', parts(cache.build_cache))
    with pytest.raises(KeyboardInterrupt):
        score.score_file(saved / 'pairs.jsonl', saved / 'base', tmp_path / 's.jsonl', save_every=0, progress=False)
    assert not (tmp_path / 's.jsonl').exists() and calls == [16, 16]
    first = len(score.BaseSurprisalCache(tmp_path / 's.iscache'))
    monkeypatch.setattr(cache, '_score_flat', real)
    done = score.score_file(saved / 'pairs.jsonl', saved / 'base', tmp_path / 's.jsonl', save_every=0, progress=False)
    n_distinct = len(score.BaseSurprisalCache(tmp_path / 's.iscache'))
    assert 0 < first < n_distinct and done['scored'] == n_distinct - first and done['pairs'] == 40
    whole = score.score_file(saved / 'pairs.jsonl', saved / 'base', tmp_path / 'w.jsonl', progress=False)
    assert [json.loads(l)['b'] for l in open(tmp_path / 's.jsonl')] == [json.loads(l)['b'] for l in open(tmp_path / 'w.jsonl')]
    assert whole['scored'] == n_distinct

def test_changed_tokenizer_is_scored_anew(saved, tmp_path):
    "A tokenizer that writes other ids for the same text gives other content keys: its pairs are scored, not served old b."
    first = score.score_file(saved / 'pairs.jsonl', saved / 'base', tmp_path / 'a.jsonl', cache=tmp_path / 'b.iscache', progress=False)
    tok = transformers.AutoTokenizer.from_pretrained(saved / 'base', local_files_only=True)
    vocab = tok.get_vocab()
    words = sorted(w for w in vocab if not w.startswith('['))
    spec = json.loads(tok.backend_tokenizer.to_str())
    # two words swap their ids
    a, b = words[0], words[1]
    spec['model']['vocab'][a], spec['model']['vocab'][b] = vocab[b], vocab[a]
    from tokenizers import Tokenizer
    swapped = transformers.PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(json.dumps(spec)), pad_token='[PAD]', unk_token='[UNK]', eos_token='[EOS]')
    swapped.save_pretrained(tmp_path / 'tok')
    second = score.score_file(saved / 'pairs.jsonl', saved / 'base', tmp_path / 'c.jsonl', tokenizer=tmp_path / 'tok', cache=tmp_path / 'b.iscache', progress=False)
    ta, tc = ([json.loads(l) for l in open(tmp_path / n)] for n in ('a.jsonl', 'c.jsonl'))
    changed = [r['key'] != s['key'] for r, s in zip(ta, tc)]
    assert any(changed) and second['scored'] == len({s['key'] for s, c in zip(tc, changed) if c} - {r['key'] for r in ta})
    assert first['scored'] > 0

@pytest.mark.parametrize('case', ['malformed', 'missing column', 'unwritable', 'folder', 'dtype'])
def test_refusals_are_one_line(saved, tmp_path, case):
    (tmp_path / 'bad.jsonl').write_text('{"x": "the", "y": "cat"}\n{"x": "the"\n')
    (tmp_path / 'nocol.csv').write_text('x,target\nthe,cat\n')
    data, out, extra, msg = {
        'malformed': ('bad.jsonl', tmp_path / 's.jsonl', [], 'bad.jsonl, line 2: not JSON'),
        'missing column': ('nocol.csv', tmp_path / 's.jsonl', [], "missing key(s) ['y']"),
        'unwritable': (saved / 'pairs.jsonl', '/proc/s.jsonl', [], 'cannot write in /proc'),
        'folder': (saved / 'pairs.jsonl', tmp_path, [], 'is a folder: name a file'),
        'dtype': (saved / 'pairs.jsonl', tmp_path / 's.jsonl', ['--dtype', 'float16'], "invalid choice: 'float16'"),
    }[case]
    res = cli('score', '--data', tmp_path / data if isinstance(data, str) else data, '--base-model', saved / 'base', '--out', out, *extra, '--no-progress', check=False)
    assert res.returncode == 2 and 'Traceback' not in res.stderr, res.stderr
    assert msg in res.stderr.strip().splitlines()[-1], res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ['bad.jsonl', 'nocol.csv']   # nothing half-written

def test_two_processes_write_one_table(saved, tmp_path):
    "Under torchrun each rank scores its share; rank 0 writes the one table, equal to one process's."
    env = dict(os.environ, OMP_NUM_THREADS='1')
    run(*CLI, '--data', saved / 'pairs.jsonl', '--base-model', saved / 'base', '--out', tmp_path / 'one.jsonl', '--device', 'cpu', '--no-progress', env=env)
    script = tmp_path / 'score.py'; script.write_text('import sys\nfrom inverse_surprisal.cli import main\nmain(sys.argv[1:])\n')
    run(sys.executable, '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', '2', script, 'score', '--data', saved / 'pairs.jsonl', '--base-model', saved / 'base', '--out', tmp_path / 'two.jsonl', '--device', 'cpu',
        '--batch-size', '4', '--no-progress', env=env)
    one, two = ([json.loads(l) for l in open(tmp_path / n)] for n in ('one.jsonl', 'two.jsonl'))
    assert [r['key'] for r in one] == [r['key'] for r in two]
    np.testing.assert_allclose([r['b'] for r in two], [r['b'] for r in one], rtol=1e-5)

def test_too_long_pairs_are_an_error_or_left_out_and_counted(saved, tmp_path):
    "The tiny GPT-2 reads 16 positions: a longer pair stops the call, or with --too-long drop has no row and is counted."
    lines = (saved / 'pairs.jsonl').read_text().splitlines()
    long = json.dumps(dict(x=' '.join(['the'] * 12), y=' '.join(['cat'] * 6)))
    (tmp_path / 'p.jsonl').write_text('\n'.join(lines[:3] + [long] + lines[3:]) + '\n')
    args = ['--data', tmp_path / 'p.jsonl', '--base-model', saved / 'base', '--no-progress']
    res = cli('score', *args, '--out', tmp_path / 'a.jsonl', check=False)
    assert res.returncode == 2 and 'longer than max_len=16' in res.stderr and not (tmp_path / 'a.jsonl').exists()
    res = cli('score', *args, '--out', tmp_path / 'b.jsonl', '--too-long', 'drop')
    assert '1 left out as too long' in res.stdout
    assert [json.loads(l)['pair'] for l in open(tmp_path / 'b.jsonl')] == [0, 1, 2] + list(range(4, 41))
