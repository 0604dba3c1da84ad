"""Why does TF-IDF k-means beat every likelihood clustering on Debian's synopses (issue 45)? The mixture of unigrams of
the real-text probe refitted on four other views of the same words: English stop words out, counts weighted by IDF,
each text's counts scaled to the mean length (so short and long texts weigh alike), and both. Same pairs, same held-out
split, same judge (NMI with the category beyond x, less chance) as experiments/probe_real_text.py; each corpus and seed is a
JSON file in experiments/real_text/results/ (skipped on the next start).
Usage: python experiments/probe_mixture_variants.py CORPUS[,CORPUS] SEED[,SEED...]"""
import json, sys
import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize
import probe_real_text as P
import torch
from inverse_surprisal.clustering import fit_mixture_of_unigrams
from inverse_surprisal.files import atomic_write_bytes

VARIANTS = dict(plain=dict(), stop_words_out=dict(stop=True), idf=dict(idf=True), length_scaled=dict(scale=True),
                idf_length_scaled=dict(idf=True, scale=True))

def _torch(m): # a scipy sparse matrix as a sparse float64 torch tensor
    m = m.tocoo()
    return torch.sparse_coo_tensor(np.vstack([m.row, m.col]), m.data, m.shape, dtype=torch.float64,
                                   check_invariants=True)

def view(train_y, held_y, stop=False, idf=False, scale=False):
    "The training and held-out bags of words (words in >= 2 training texts), weighted as the variant says."
    vec = CountVectorizer(min_df=2, stop_words='english' if stop else None)
    a, b = vec.fit_transform(train_y).astype(float), vec.transform(held_y).astype(float)
    mean_len = a.sum(1).mean()
    if idf:
        w = np.log(a.shape[0] / np.asarray((a > 0).sum(0)).ravel()) + 1
        a, b = a.multiply(w).tocsr(), b.multiply(w).tocsr()
    if scale: a, b = normalize(a, 'l1') * mean_len, normalize(b, 'l1') * mean_len
    return _torch(a), _torch(b)

def main(corpora, seeds):
    for corpus in corpora.split(','):
        pairs_path, base_dir = P.prepare(corpus, P.HERE / 'work')
        for seed in map(int, seeds.split(',')):
            out = P.HERE / 'results' / f'{corpus}_mixture_variants_s{seed}.json'
            if out.exists(): print(out.read_text()); continue
            train, held = P.split(pairs_path, base_dir, seed)
            rec = {}
            for name, kw in VARIANTS.items():
                a, b = view([r['y'] for r in train], [r['y'] for r in held], **kw)
                rec[name] = P.judged(fit_mixture_of_unigrams(a, P.K, seed)[0].responsibilities(b).argmax(1), held)
            atomic_write_bytes(out, json.dumps(rec, indent=1).encode())
            print(corpus, seed, {k: round(v['above_chance'], 3) for k, v in rec.items()}, flush=True)

if __name__ == '__main__': main(*sys.argv[1:3])
