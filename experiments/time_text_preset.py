"""The `text` preset at the size a researcher brings (issue 45's target: <= 15 minutes on 2 cores, scoring included):
30 000 WordNet glosses (Debian's wordnet-base; x = part of speech, y = definition), a byte-level BPE tokenizer and a
3-layer GPT-2 base trained here on 30 000 *other* glosses and saved with save_pretrained, then the documented command
    inverse-surprisal train --data pairs.jsonl --base-model base --out run --set data.too_long=drop
timed as one process (the base model's preparation is not timed). Run it with nothing else on the machine. Writes
experiments/real_text/results/text_preset_30k.json (the wall seconds, the run's held-out figures); skipped when there.
Usage: python experiments/time_text_preset.py [--pairs N] [--out DIR] [--prepare-only]"""
import argparse, json, subprocess, sys, time
from pathlib import Path

import torch, transformers

sys.path.insert(0, str(Path(__file__).parent))
from probe_real_text import train_base, wordnet_rows
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
    train_base(other, other, work / 'base', vocab=4000, min_frequency=2, positions=96, width=96, layers=3,
               steps=1000, every=250)

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--pairs', type=int, default=30000); ap.add_argument('--out', default=str(HERE))
    ap.add_argument('--prepare-only', action='store_true', help='make the pairs and the base model, time nothing')
    a = ap.parse_args()
    record = Path(a.out) / 'results' / f'text_preset_{a.pairs // 1000}k.json'
    if record.exists(): print(record.read_text()); return
    work = Path(a.out) / 'work' / f'text_preset_{a.pairs // 1000}k'
    prepare(work, a.pairs)
    if a.prepare_only: return
    y_tokens = [len(it['input_ids']) for it in TextPairs(read_pairs(work / 'pairs.jsonl'),
                transformers.AutoTokenizer.from_pretrained(work / 'base'), 96, 'drop')]
    run = work / f'run_{int(time.time())}'
    t0 = time.perf_counter()
    subprocess.run([str(Path(sys.executable).parent / 'inverse-surprisal'), 'train', '--data', str(work / 'pairs.jsonl'),
                    '--base-model', str(work / 'base'), '--out', str(run), '--no-progress',
                    '--set', 'data.too_long="drop"'], check=True)      # a gloss or two longer than the base reads
    wall = time.perf_counter() - t0
    metrics = json.loads((run / 'metrics.json').read_text())
    rec = dict(pairs=a.pairs, tokens_per_pair_median=sorted(y_tokens)[len(y_tokens) // 2], wall_seconds=round(wall, 1),
               config=json.loads((run / 'config.json').read_text()),
               held_out={k: metrics[k] for k in ('kl', 'code_contribution', 'decoder_vs_base', 'codes_used',
                                                 'code_perplexity', 'n_heldout', 'n_train') if k in metrics})
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(rec, indent=1) + '\n')
    print(json.dumps(rec, indent=1))

if __name__ == '__main__': main()
