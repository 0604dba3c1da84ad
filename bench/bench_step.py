"""One exact-enumeration training step of the `full` preset's discrete CVAE (C = 16 joint classes, batch 64, exact b*):
milliseconds with z as a prefix before x (the whole sequence once per class) against z at the separator and y (the
context's keys and values once, shared by the classes), interleaved repeats, medians; the ratio the speed issue sets a
goal on; training examples per second; and bf16 autocast against float32 on the same batches (the loss's relative
difference, and the step time). Prints one JSON object."""
import argparse, json, statistics, time

import torch

from inverse_surprisal.config import make_config, model_config, task_shape
from inverse_surprisal.shared_discrete_cvae import SharedDiscreteCVAE

BATCH, REPEATS, STEPS = 64, 5, 10

def setup(z_entry: str, device):
    "The full preset's model (seed 0) and a fixed batch of the task with its exact b*."
    cfg = make_config('full', dict(model=dict(z_entry=z_entry)))
    task = cfg.task.build()
    torch.manual_seed(0)
    model = SharedDiscreteCVAE(model_config(cfg.model, **task_shape(task)), cfg.objective).to(device)
    batch = task.sample(BATCH, 0)
    ids, ym = task.model_inputs(batch.x, batch.y)
    tok = torch.zeros(ids.shape); tok[:, -task.length:] = task.token_marginal_nll(batch.x, batch.y).float()
    b = task.marginal_nll(batch.x, batch.y).float()
    return model, torch.optim.Adam(model.parameters(), 3e-3), [t.to(device) for t in (ids, ym, b, tok)], float(b.mean())

def step(model, opt, inputs, base_mean, device, bf16=False):
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
        out = model(*inputs, base_mean, step=500)
    opt.zero_grad(); out.loss.backward(); opt.step()
    return out.loss.item()                                      # waits for the device

def ms_per_step(arm, device, bf16=False) -> float:
    start = time.perf_counter()
    for _ in range(STEPS): step(*arm, device, bf16)
    return 1000 * (time.perf_counter() - start) / STEPS

def main():
    p = argparse.ArgumentParser(description=__doc__); p.add_argument('--device', default='cpu')
    device = torch.device(p.parse_args().device)
    arms = {z: setup(z, device) for z in ('prefix', 'y')}
    for arm in arms.values(): ms_per_step(arm, device)          # warm-up
    times = {z: [] for z in arms} | {'y_bf16': []}
    for _ in range(REPEATS):
        for z, arm in arms.items(): times[z].append(ms_per_step(arm, device))
        times['y_bf16'].append(ms_per_step(arms['y'], device, bf16=True))
    med = {k: statistics.median(v) for k, v in times.items()}
    # bf16 against float32: the same fresh model and batch, the loss of one forward
    model, _, inputs, base_mean = setup('y', device)
    with torch.no_grad():
        losses = [model(*inputs, base_mean, step=500).loss.item()]
        with torch.autocast(device.type, dtype=torch.bfloat16): losses.append(model(*inputs, base_mean, step=500).loss.item())
    res = dict(step_ms_prefix=med['prefix'], step_ms_shared_context=med['y'],
               per_class_step_ratio=med['y'] / med['prefix'],
               training_examples_per_second=1000 * BATCH / med['y'],
               step_ms_shared_context_bf16=med['y_bf16'],
               bf16_loss_relative_difference=abs(losses[1] - losses[0]) / abs(losses[0]),
               spread_prefix=f"{min(times['prefix']):.0f}-{max(times['prefix']):.0f} ms",
               spread_shared_context=f"{min(times['y']):.0f}-{max(times['y']):.0f} ms")
    print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in res.items()}))

if __name__ == '__main__': main()
