"""Nothing silently wrong on a researcher's own files: one process per run directory, never someone else's folder,
resume that notices changed inputs, causal bases only, held-out splits by content, strict data files, numbers that
stay finite, and settings that the run would ignore or crash on refused before it starts. One test per defect."""
import json, os, shutil, socket, subprocess, sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))   # the tests' helpers
from runs import BIN, cli, records, run

CLI = [str(BIN / 'inverse-surprisal')]
TINY = ['train', '--preset', 'tiny', '--no-progress']
transformers = pytest.importorskip('transformers')
OWN = ['--set', 'steps=4', '--set', 'eval_every=2', '--set', 'batch_size=8', '--set', 'model.d_model=16',
       '--set', 'data.eval_fraction=0.25', '--no-progress']

def own_run(saved, out, data=None, base=None, *extra, check=True):
    "`train` on the saved pairs and GPT-2 (or other ones), a few steps, in this process (`cli`)."
    return cli('train', '--data', data or saved / 'pairs.jsonl', '--base-model', base or saved / 'base',
               '--out', out, *OWN, *extra, check=check)

def refused(res, *words):
    "The command stopped with status 2 and one line that says each of `words`, without a traceback."
    assert res.returncode == 2, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    assert 'Traceback' not in res.stderr and all(w in res.stderr for w in words), res.stderr[-2000:]

# 1. two processes on one --out

def test_a_held_run_directory_refuses_a_second_process(tmp_path):
    from inverse_surprisal.run_dir import run_directory
    out = tmp_path / 'run'
    with run_directory(out):
        refused(run(*CLI, *TINY, '--out', out, check=False), 'in use by process', str(os.getpid()), socket.gethostname())
        assert not (out / 'metrics.jsonl').exists()
    run(*CLI, *TINY, '--out', out)                             # released: the run goes ahead
    assert (out / 'metrics.json').exists()

def test_two_concurrent_runs_on_one_out(tmp_path):
    "Started together: one runs, the other is refused; the log holds one run's lines, each step once."
    out = tmp_path / 'run'
    procs = [subprocess.Popen([*CLI, *TINY, '--seed', str(s), '--out', str(out)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for s in (0, 1)]
    codes = sorted(p.wait(timeout=600) for p in procs)
    assert codes == [0, 2], codes
    for phase in ('base', 'cvae', 'eval'):
        steps = [r['step'] for r in records(out) if r['phase'] == phase]
        assert steps == sorted(set(steps)), (phase, steps)

def test_a_stale_lock_after_a_crash_is_taken_over(tmp_path):
    "A lock file whose process is gone (no lock held on it) does not stop the next run."
    out = tmp_path / 'run'; out.mkdir()
    (out / 'inverse-surprisal-run.json').write_text(json.dumps(dict(kind='run')))
    (out / 'run.lock').write_text('pid 999999 on a-crashed-host\n')
    cli(*TINY, '--out', out)

# 4. --out on someone else's folder

def test_out_on_a_folder_of_user_files_is_refused(tmp_path):
    mine = tmp_path / 'mine'; mine.mkdir()
    files = {'config.json': '{"my": "settings"}', 'metrics.json': '[1, 2]', '.draft.tmp': 'notes'}
    for name, text in files.items(): (mine / name).write_text(text)
    refused(cli(*TINY, '--out', mine, check=False), f'--out {mine}', 'not a run directory')
    assert {p.name: p.read_text() for p in mine.iterdir()} == files      # untouched, nothing added
    refused(cli(*TINY, '--out', '', check=False), '--out')
    refused(cli('compare', '--preset', 'tiny', '--no-progress', '--out', mine, check=False), 'not a run directory')

def test_out_empty_or_missing_is_taken(tmp_path):
    (tmp_path / 'empty').mkdir()
    for out in (tmp_path / 'empty', tmp_path / 'missing'):
        cli(*TINY, '--out', out)
        assert json.loads((out / 'inverse-surprisal-run.json').read_text())['kind'] == 'run'

# 2. resume after the inputs changed

def test_resume_after_the_data_file_changed(saved, tmp_path):
    data = tmp_path / 'pairs.jsonl'; shutil.copy(saved / 'pairs.jsonl', data)
    own_run(saved, tmp_path / 'r', data)
    own_run(saved, tmp_path / 'r', data, None, '--resume')    # the same file: it resumes
    lines = data.read_text().splitlines()
    data.write_text('\n'.join(lines[:-1] + ['{"x": "the cat", "y": "sat on the mat and then ran"}']) + '\n')
    refused(own_run(saved, tmp_path / 'r', data, None, '--resume', check=False), 'data file', 'changed')

def test_resume_after_the_base_folder_changed(saved, tmp_path):
    base = tmp_path / 'base'; shutil.copytree(saved / 'base', base)
    own_run(saved, tmp_path / 'r', None, base)
    torch.manual_seed(1)
    cfg = transformers.GPT2Config.from_pretrained(base, local_files_only=True)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(base)   # other weights, same path
    refused(own_run(saved, tmp_path / 'r', None, base, '--resume', check=False), 'base model', 'changed')

# 3. bidirectional models are not bases

@pytest.fixture(scope='module')
def berts(saved, tmp_path_factory):
    d = tmp_path_factory.mktemp('bert')
    cfg = transformers.BertConfig(vocab_size=19, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32, max_position_embeddings=16)
    for cls in (transformers.BertForMaskedLM, transformers.BertModel):
        torch.manual_seed(0); cls(cfg).save_pretrained(d / cls.__name__)
        for f in (saved / 'base').glob('tokenizer*'): shutil.copy(f, d / cls.__name__)
    return d

@pytest.mark.parametrize('name', ['BertForMaskedLM', 'BertModel'])
def test_a_bert_folder_is_not_a_base(berts, name):
    from inverse_surprisal.text import load_causal_lm
    with pytest.raises(ValueError, match='not a causal LM'): load_causal_lm(berts / name)

def test_cli_refuses_a_bert_base(saved, berts, tmp_path):
    refused(own_run(saved, tmp_path / 'r', None, berts / 'BertForMaskedLM', check=False), 'not a causal LM')

def test_check_causal(saved):
    "The direct check: changing token t must not change the logits before t; a BERT with is_decoder=False fails it."
    from inverse_surprisal.reference import check_causal
    from inverse_surprisal.text import load_causal_lm
    ids = torch.arange(3, 15)[None]
    check_causal(load_causal_lm(saved / 'base'), ids)
    torch.manual_seed(0)
    bert = transformers.BertLMHeadModel(transformers.BertConfig(vocab_size=19, hidden_size=16, num_hidden_layers=1,
                                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=16)).eval()
    with pytest.raises(ValueError, match='not causal: changing token'): check_causal(bert, ids)

# 5. duplicates stay on one side of the split

def test_duplicate_pairs_stay_together(saved, tmp_path):
    from inverse_surprisal.config import make_config
    from inverse_surprisal.train import Trainer
    lines = (saved / 'pairs.jsonl').read_text().splitlines()
    data = tmp_path / 'dup.jsonl'; data.write_text('\n'.join(lines + [lines[0]] * 30) + '\n')
    cfg = make_config('text', dict(data=dict(path=str(data), base_model=str(saved / 'base'), eval_fraction=0.25)))
    tr = Trainer(cfg, tmp_path / 'r', progress=False)
    train = {tuple(it['input_ids'].tolist()) for it in tr.train_set}
    assert not any(tuple(it['input_ids'].tolist()) in train for it in tr.eval_set)
    assert tr.data.n_duplicates == 30 and len(tr.train_set) + len(tr.eval_set) == 70
    only = tmp_path / 'same.jsonl'; only.write_text('\n'.join([lines[0]] * 30) + '\n')
    refused(own_run(saved, tmp_path / 's', only, check=False), '1 distinct pair')

def test_fewer_training_pairs_than_codes_is_refused_before_any_work(saved, tmp_path):
    "The text preset's start clusters the training pairs into its codes: k-means died on 2 pairs after scoring."
    lines = (saved / 'pairs.jsonl').read_text().splitlines()
    few = tmp_path / 'few.jsonl'; few.write_text('\n'.join(lines[:6]) + '\n')
    refused(own_run(saved, tmp_path / 'r', few, check=False), 'training pairs, fewer than the 8 codes', "start.codes='view_kmeans'")
    assert not (tmp_path / 'r').exists()

def test_own_categories_judge_the_code_and_training_never_reads_them(saved, tmp_path):
    "--set data.label_key=topic: report and export judge the codes beside the classical clusterings; the column changes no weight."
    from safetensors import safe_open
    g, sets = np.random.default_rng(1), [['cat', 'dog', 'sat', 'ran'], ['red', 'blue', 'big', 'small'], ['mat', 'log', 'on', 'under']]
    rows = [dict(x=str(g.choice(['the', 'a'])), y=' '.join(g.choice(sets[i % 3], 4)), topic=['animal', 'colour', 'place'][i % 3])
            for i in range(120)]
    shuffled = [dict(r, topic=t) for r, t in zip(rows, g.permutation([r['topic'] for r in rows]))]
    for name, rs in (('topics', rows), ('shuffled', shuffled)):
        (tmp_path / f'{name}.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rs))
        own_run(saved, tmp_path / name, tmp_path / f'{name}.jsonl', None, '--set', 'data.label_key=topic',
                '--set', 'data.eval_fraction=0.25')
    weights = lambda run: (lambda f: {k: f.get_tensor(k) for k in f.keys() if k.startswith('model.')})(
        safe_open(run / 'cvae.safetensors', 'pt'))
    a, b = weights(tmp_path / 'topics'), weights(tmp_path / 'shuffled')
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)        # the column is never read
    res = cli('report', tmp_path / 'topics')
    table = res.stdout.split("own categories (topic)")[1]
    scores = {w[0]: [float(v) for v in w[1:]] for w in map(str.split, table.splitlines())
              if w and w[0] in ('code', 'tfidf_kmeans', 'mixture_of_unigrams', 'lda', 'embedding_kmeans')}
    assert {'code', 'tfidf_kmeans', 'mixture_of_unigrams', 'lda'} <= set(scores), table
    assert max(scores[n][0] for n in ('tfidf_kmeans', 'mixture_of_unigrams')) > 0.9, table   # the planted sets, found
    res = cli('export', tmp_path / 'topics', '--out', tmp_path / 'held.jsonl', '--device', 'cpu')
    assert table.split('```')[1].strip() in res.stdout                  # the same judge's table
    held = [json.loads(line) for line in (tmp_path / 'held.jsonl').read_text().splitlines()]
    assert all(h['category'] == rows[h['pair']]['topic'] for h in held) and len(held) > 20
    # what each code means: the report's table per code, its figure, and the export's same table
    report = (tmp_path / 'topics' / 'report.md').read_text()
    assert '![codes](codes.png)' in report and (tmp_path / 'topics' / 'codes.png').stat().st_size > 0
    codes = report.split('## The codes\n\n')[1].split('\n\n![codes]')[0]
    assert codes in res.stdout                                          # the same held-out pass's table
    cells = [[c.strip() for c in line.split('|')[1:-1]] for line in codes.splitlines()[2:] if line.startswith('| ')]
    for code, share, b, b_l, *_ in cells:
        mine = [h for h in held if h['code'] == int(code)]
        assert abs(float(share) - len(mine) / len(held)) < 5e-4
        assert abs(float(b) - np.mean([h['b'] for h in mine])) < 5e-3
        assert abs(float(b_l) - np.mean([h['b'] - h['l'] for h in mine])) < 5e-3
    assert sum(len([h for h in held if h['code'] == int(c[0])]) for c in cells) == len(held)

def test_a_runs_own_files_and_inputs_are_never_a_destination(saved, tmp_path):
    "score --cache into a run, export --out onto the run's own pairs (with --overwrite): refused, every byte kept."
    pairs = tmp_path / 'pairs.jsonl'; shutil.copy(saved / 'pairs.jsonl', pairs)
    own_run(saved, tmp_path / 'run', pairs)
    before = {p: p.read_bytes() for p in [pairs, *(tmp_path / 'run').glob('*.iscache')]}
    refused(cli('score', '--data', pairs, '--base-model', saved / 'base', '--out', tmp_path / 'b.jsonl',
                '--cache', tmp_path / 'run' / 'base_train.iscache', check=False), 'lies in the run directory')
    refused(cli('export', tmp_path / 'run', '--out', pairs, '--overwrite', '--device', 'cpu', check=False),
            f'is data.path {pairs}', 'which is read, not written')
    assert {p: p.read_bytes() for p in before} == before and len(before) == 3
    cli('report', tmp_path / 'run')                               # the run still opens

def test_categories_when_every_x_differs(saved, tmp_path):
    "Nothing is left beyond x: report and export say so beside AMI, write their files whole and exit 0."
    g, sets = np.random.default_rng(2), [['cat', 'dog', 'sat', 'ran'], ['red', 'blue', 'big', 'small']]
    rows = [dict(x=f'item {i}', y=' '.join(g.choice(sets[i % 2], 4)), topic=['animal', 'colour'][i % 2])
            for i in range(80)]
    (tmp_path / 'own.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows))
    own_run(saved, tmp_path / 'run', tmp_path / 'own.jsonl', None, '--set', 'data.label_key=topic')
    res = cli('report', tmp_path / 'run')
    assert 'nothing is left to judge beyond x' in res.stdout and 'n/a' in (tmp_path / 'run' / 'report.md').read_text()
    res = cli('export', tmp_path / 'run', '--out', tmp_path / 'held.jsonl', '--device', 'cpu')
    assert 'nothing is left to judge beyond x' in res.stdout
    assert len((tmp_path / 'held.jsonl').read_text().splitlines()) == 20

@pytest.mark.parametrize('text, extra, words', [
    ('x,y,topic\nthe cat,sat,animal\na dog,ran,\n', [], ["line 3: 'topic' is empty"]),
    ('x,y,topic\nthe cat,sat,animal\n', ['--set', 'data.label_key=y'], ["label_key='y' names the y column"]),
])
def test_a_missing_or_borrowed_category_is_refused_before_any_work(saved, tmp_path, text, extra, words):
    "An empty category cell (a null in any format) and a category column that is x or y: refused, nothing written."
    (tmp_path / 'own.csv').write_text(text)
    refused(own_run(saved, tmp_path / 'r', tmp_path / 'own.csv', None, '--set', 'data.label_key=topic', *extra,
                    check=False), *words)
    assert not (tmp_path / 'r').exists()

# 6. data files read strictly

@pytest.mark.parametrize('text, message', [
    ('x,y\nthe cat,sat on, the mat\n', 'line 2: 3 fields, the header has 2'),
    ('x,y,y\na,b,c\n', "duplicated column name(s) ['y']"),
    ('x,y\na\n', 'line 2: 1 field, the header has 2'),
])
def test_csv_rows_are_read_strictly(tmp_path, text, message):
    from inverse_surprisal.text import read_pairs
    (tmp_path / 'p.csv').write_text(text)
    with pytest.raises(ValueError) as e: read_pairs(tmp_path / 'p.csv')
    assert message in str(e.value) and 'p.csv' in str(e.value), str(e.value)

def test_a_name_given_twice_is_refused_in_every_format(tmp_path):
    "Parquet read the first of two columns named y, and json.loads keeps the last of two keys: both without a word."
    import pyarrow as pa, pyarrow.parquet as pq
    from inverse_surprisal.text import read_pairs
    pq.write_table(pa.Table.from_arrays([pa.array(['a']), pa.array(['b']), pa.array(['c'])], names=['x', 'y', 'y']),
                   tmp_path / 'p.parquet')
    with pytest.raises(ValueError, match=r"p.parquet: duplicated column name\(s\) \['y'\]"): read_pairs(tmp_path / 'p.parquet')
    (tmp_path / 'p.jsonl').write_text('{"x": "a", "y": "b"}\n{"x": "a", "y": "b", "y": "c"}\n')
    with pytest.raises(ValueError, match=r"p.jsonl, line 2: duplicated key\(s\) \['y'\]"): read_pairs(tmp_path / 'p.jsonl')

def test_encodings(tmp_path):
    from inverse_surprisal.text import read_pairs
    (tmp_path / 'bom.csv').write_bytes('\ufeffx,y\na,b\n'.encode())              # as spreadsheets write it
    (tmp_path / 'bom.jsonl').write_bytes('\ufeff{"x": "a", "y": "b"}\n'.encode())
    assert read_pairs(tmp_path / 'bom.csv') == read_pairs(tmp_path / 'bom.jsonl') == [('a', 'b')]
    (tmp_path / 'latin.jsonl').write_bytes(b'{"x": "a", "y": "b"}\n{"x": "caf\xe9", "y": "b"}\n')
    with pytest.raises(ValueError, match=r'latin.jsonl, line 2: not UTF-8'): read_pairs(tmp_path / 'latin.jsonl')

def test_special_token_strings_are_refused_or_split(saved):
    from inverse_surprisal.text import TextPairs, load_tokenizer
    tok = load_tokenizer(saved / 'base')
    for pair in (('the cat', '[PAD] [PAD]'), ('the [EOS] cat', 'sat')):
        with pytest.raises(ValueError, match=r"pair 0: .* the tokenizer's special token"): TextPairs([pair], tok)
    data = TextPairs([('the cat', '[PAD] [PAD]')], tok, special_tokens='split')
    ids = data[0]['input_ids'][data[0]['y_mask']].tolist()
    assert tok.pad_token_id not in ids and ids[-1] == tok.eos_token_id and len(ids) > 3

# 8. numbers

def test_half_precision_weights_stay_finite():
    from inverse_surprisal.losses import example_inverse_surprisal_weights, token_surprisal_share_weights
    w = example_inverse_surprisal_weights(torch.zeros(3, dtype=torch.half), 1e-6)
    assert torch.isfinite(w).all() and w.dtype == torch.float32 and torch.allclose(w, torch.full((3,), 1e6))
    s = torch.full((2, 600), 200., dtype=torch.half)                # sums to 120000 > fp16's 65504
    w = token_surprisal_share_weights(s, torch.ones(2, 600, dtype=torch.bool))
    assert torch.isfinite(w).all() and torch.allclose(w, torch.ones(2, 600))

def test_unrepresentable_numbers_are_refused(tmp_path):
    from inverse_surprisal.objective import ObjectiveConfig
    with pytest.raises(ValueError, match='eps must be'): ObjectiveConfig(eps=1e308)
    with pytest.raises(ValueError, match='beta must be'): ObjectiveConfig(beta=1e300)
    refused(cli(*TINY, '--out', tmp_path / 'r', '--eps', '1e308', '--recon', 'example', check=False), 'eps must be')
    refused(cli(*TINY, '--out', tmp_path / 'r', '--set', 'lr=1e300', check=False), 'lr must be')

# 9. settings accepted and then crashing or ignored

@pytest.mark.parametrize('args, message', [
    (['--set', 'n_eval=1'], 'n_eval must be an int >= 2'),
    (['--set', 'preset=full'], 'choose a preset with --preset'),
    (['--tokenizer', 'somewhere'], '--tokenizer goes with --data'),
    (['--base-model', 'somewhere'], '--base-model goes with --data'),
    (['--eps', '0.5', '--recon', 'plain'], "--eps is the example-level term's"),
])
def test_settings_the_run_would_ignore_or_crash_on(tmp_path, args, message):
    refused(cli(*TINY, '--out', tmp_path / 'r', *args, check=False), message)
    assert not (tmp_path / 'r').exists()

def test_config_with_preset_is_refused(tmp_path):
    cli(*TINY, '--out', tmp_path / 'r')
    res = cli('train', '--config', tmp_path / 'r' / 'config.json', '--preset', 'demo', '--out', tmp_path / 's',
              check=False)
    refused(res, '--config and --preset')

# 7. errors that were tracebacks

def test_report_and_resume_on_damaged_run_directories(tmp_path):
    out = tmp_path / 'r'; cli(*TINY, '--out', out)
    (out / 'metrics.jsonl').unlink()
    refused(cli('report', out, check=False), 'metrics.jsonl')
    (out / 'config.json').write_text('{not json')
    refused(cli(*TINY, '--out', out, '--resume', check=False), 'config.json')

def test_unwritable_out(tmp_path):
    (tmp_path / 'file').write_text('a file')
    refused(cli(*TINY, '--out', tmp_path / 'file' / 'run', check=False), str(tmp_path / 'file'))
    refused(cli(*TINY, '--out', tmp_path / 'r', '--device', 'meta', check=False), '--device meta')

def test_model_vocabulary_smaller_than_the_tokenizer(saved, tmp_path):
    small = transformers.GPT2Config.from_pretrained(saved / 'base', local_files_only=True); small.vocab_size = 5
    transformers.GPT2LMHeadModel(small).save_pretrained(tmp_path / 'small')
    refused(own_run(saved, tmp_path / 'r', None, tmp_path / 'small', '--tokenizer', saved / 'base', check=False),
            'embeds 5 tokens')

def test_truncated_weights(saved, tmp_path):
    base = tmp_path / 'base'; shutil.copytree(saved / 'base', base)
    w = base / 'model.safetensors'; w.write_bytes(w.read_bytes()[:len(w.read_bytes()) // 2])
    refused(own_run(saved, tmp_path / 'r', None, base, check=False), f'base model folder {base}')

def test_full_disk(tmp_path):
    "A run on a 256 KiB tmpfs: one line naming the file it could not write, exit 2, no temporary file left."
    disk = tmp_path / 'disk'; disk.mkdir()
    if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', str(disk)], capture_output=True).returncode:
        pytest.skip('mounting a tmpfs is not allowed here')
    try:
        res = cli(*TINY, '--out', disk / 'run', check=False)
        refused(res, 'No space left on device', str(disk / 'run'))
        assert not list((disk / 'run').glob('.*.tmp'))
    finally: subprocess.run(['umount', str(disk)])

# 8. the doors a run's files go through (issue 46)

def test_resume_replays_a_log_torn_by_a_kill(tmp_path):
    "The last line of metrics.jsonl torn by a kill: the TensorBoard replay leaves it out, as the log's cut does."
    out = tmp_path / 'r'; cli(*TINY, '--out', out)
    log = out / 'metrics.jsonl'; text = log.read_text(); log.write_text(text[:-len(text.splitlines()[-1]) // 2 - 1])
    cli(*TINY, '--out', out, '--resume')
    assert all('phase' in r for r in records(out))                        # whole lines only, again

def test_a_damaged_cache_or_report_is_one_line(tmp_path):
    out = tmp_path / 'r'; cli(*TINY, '--out', out)
    cache = out / 'base_train.iscache'; raw = bytearray(cache.read_bytes()); raw[-3] ^= 0xff; cache.write_bytes(bytes(raw))
    refused(cli(*TINY, '--out', out, '--resume', check=False), 'base_train.iscache', 'fails its checksum')
    (out / 'report.md').mkdir()                                       # a report that cannot be written
    refused(cli('report', out, check=False), 'report.md')

def test_relative_paths_are_found_from_another_folder(saved, tmp_path):
    work, elsewhere = tmp_path / 'work', tmp_path / 'elsewhere'; work.mkdir(); elsewhere.mkdir()
    shutil.copy(saved / 'pairs.jsonl', work); shutil.copytree(saved / 'base', work / 'base')
    cli('train', '--data', 'pairs.jsonl', '--base-model', 'base', '--out', 'run', *OWN, cwd=work)
    cfg = json.loads((work / 'run' / 'config.json').read_text())['data']
    assert (cfg['path'], cfg['base_model']) == (str(work / 'pairs.jsonl'), str(work / 'base'))
    cli('export', work / 'run', '--out', 'held.csv', '--device', 'cpu', cwd=elsewhere)
    cli('train', '--data', work / 'pairs.jsonl', '--base-model', work / 'base', '--out', work / 'run', *OWN,
        '--resume', cwd=elsewhere)
    assert (elsewhere / 'held.csv').exists()

def test_a_decoder_the_base_cannot_give_is_refused_before_scoring(saved, tmp_path):
    refused(own_run(saved, tmp_path / 'r', None, None, '--set', 'model.decoder_init="base_model"',
                    '--set', 'model.decoder_layers=9', check=False), 'model.decoder_layers=9, but the base model has 2 blocks')
    assert not (tmp_path / 'r').exists()
