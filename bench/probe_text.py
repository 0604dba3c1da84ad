"""Real-text probe (issue 28): WordNet noun glosses (Debian's wordnet-base, /usr/share/wordnet) as (word, definition)
pairs, a byte-level BPE tokenizer and a small GPT-2 base trained here on N other glosses (so that neither the CVAE's
training pairs nor its held-out ones were seen by the base), then the text preset's discrete CVAE with
16 codes, its decoder a copy of the base (`decoder_init='base_model'`), evaluated every 50 steps: KL, l0 - l (the
code's contribution), b - l0 (the decoder against the base), codes used. Resumable pieces live in bench/probe_text/.
Usage: python bench/probe_text.py [N_PAIRS] [STEPS] [SEED]"""
import json, sys, time
from pathlib import Path
import torch, tokenizers, transformers
from inverse_surprisal.config import make_config
from inverse_surprisal.text import TextPairs, collate, read_pairs
from inverse_surprisal.text_train import make_trainer

N, STEPS, SEED = (int(a) for a in (sys.argv[1:] + ['4000', '150', '0'][len(sys.argv) - 1:])[:3])
WORK = Path(__file__).parent / 'probe_text'
WORK.mkdir(exist_ok=True)
transformers.utils.logging.disable_progress_bar()

def wordnet_pairs(n):
    "The first n noun synsets' first lemma and gloss (definition only, examples cut), with the lexicographer file."
    out = []
    for line in open('/usr/share/wordnet/data.noun', encoding='utf-8'):
        if line.startswith('  '): continue
        head, gloss = line.split(' | ', 1)
        f = head.split(); word = f[4].replace('_', ' ')
        definition = gloss.split(';')[0].strip().strip('"').strip()
        if definition: out.append(dict(x=word, y=definition, lexfile=int(f[1])))
    g = torch.Generator().manual_seed(0)
    return [out[i] for i in torch.randperm(len(out), generator=g)[:n].tolist()]

pairs_path, base_dir = WORK / f'pairs{N}.jsonl', WORK / f'base{N}'
base_pairs_path = WORK / f'base_pairs{N}.jsonl'
if not pairs_path.exists():
    drawn = wordnet_pairs(2 * N)
    for path, part in ((pairs_path, drawn[:N]), (base_pairs_path, drawn[N:])):
        path.write_text(''.join(json.dumps(p) + '\n' for p in part))
if not (base_dir / 'config.json').exists():
    pairs = read_pairs(base_pairs_path)
    bpe = tokenizers.ByteLevelBPETokenizer()
    bpe.train_from_iterator([x + ' ' + y for x, y in pairs + read_pairs(pairs_path)], vocab_size=2000, special_tokens=['<pad>', '<eos>'])
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, pad_token='<pad>', eos_token='<eos>')
    tok.save_pretrained(base_dir)
    data = TextPairs(pairs, tok, max_len=64, too_long='drop')
    torch.manual_seed(0)
    lm = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=len(tok), n_positions=64, n_embd=64, n_layer=2, n_head=4,
        bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id))
    opt, gen = torch.optim.AdamW(lm.parameters(), lr=3e-3), torch.Generator().manual_seed(0)
    for step in range(600):
        batch = collate([data[i] for i in torch.randint(0, len(data), (64,), generator=gen).tolist()], tok.pad_token_id)
        loss = lm(input_ids=batch['input_ids'], attention_mask=batch['attention_mask'],
                  labels=batch['input_ids'].masked_fill(~batch['y_mask'], -100)).loss
        opt.zero_grad(); loss.backward(); opt.step()
        if step % 200 == 199: print(f'base step {step + 1}: {loss.item():.3f} nats per y token', flush=True)
    lm.save_pretrained(base_dir)

for name, extra in (('base_model', dict(decoder_init='base_model')), ('fresh', {})):
    out = WORK / f'run_{name}_{N}_{STEPS}_s{SEED}'
    if (out / 'metrics.json').exists(): print(name, 'done:', out); continue
    cfg = make_config('text', dict(seed=SEED, steps=STEPS, eval_every=50, batch_size=16, log_every=50,
                                   data=dict(path=str(pairs_path), base_model=str(base_dir), too_long='drop', **extra),
                                   model=dict(code_sizes=(16,))))
    t0 = time.perf_counter()
    tr = make_trainer(cfg, out, progress=False); tr.fit()
    for line in (out / 'metrics.jsonl').read_text().splitlines():
        r = json.loads(line)
        if r['phase'] == 'eval':
            print(name, {k: round(r[k], 4) for k in ('step', 'base_surprisal_mean', 'marginal_nll', 'recon_nll', 'kl',
                                                     'code_contribution', 'decoder_vs_base')}, flush=True)
    ev = tr._tensors(tr.eval_set, tr.b['eval'])
    with torch.no_grad(): code = tr.model.eval().posterior(ev['input_ids'], ev['attention_mask'].bool())[0].argmax(1)
    share = torch.bincount(code, minlength=16).float() / len(code)
    print(name, 'held-out pairs per code (share):', [round(v, 3) for v in share.tolist()],
          'codes used by >= 1%:', int((share >= 0.01).sum()), flush=True)
    print(name, f'{time.perf_counter() - t0:.0f} s', flush=True)
