"""Buffer size × scheduler × 10 seeds on the FSC paper's burst scenario: how the delay
of the bursty class's packets depends on the shared buffer, with 95 % confidence bands.

    .venv/bin/python examples/buffer_sweep.py [--backend ray] [--out buffer_sweep.png]

The scenario is `scenarios/fsc-burst-pbs8.toml` (FSC paper Fig. 5: a 32-packet burst
every second among 15 constant-rate flows that together offer twice the link's 10
Mbit/s). Here the 15 background flows are made Poisson (same mean rate) so that seeds
matter, and the link gets a shared buffer that pushes out from the longest queue, as in
§3 of the paper; each combination runs 10 seeds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import linkshare  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BUFFERS_KB = [32, 64, 128, 256]
SCHEDULERS = ["fsc", "wf2q", "drr", "fifo"]
SEEDS = range(10)
# Student's t for a two-sided 95 % interval with 9 degrees of freedom (10 seeds).
T_95_9 = 2.262


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="local", choices=["local", "ray"])
    parser.add_argument("--out", default="buffer_sweep.png")
    args = parser.parse_args()

    base = linkshare.load(ROOT / "scenarios" / "fsc-burst-pbs8.toml")
    # Random background traffic: every CBR flow becomes Poisson with the same rate.
    poisson = {f"flow.cbr{i}.source.type": "poisson" for i in range(1, 16)}
    scenario = base.with_(poisson).with_({"scenario.duration": "10s", "flow.burst.on": [["0.5s", "10s"]]})

    grid = {"link.buffer": [{"limit": f"{kb}kb", "overflow": "push-out"} for kb in BUFFERS_KB]}
    table = linkshare.sweep(scenario, grid=grid, schedulers=SCHEDULERS, seeds=SEEDS,
                            backend=args.backend).table
    failed = table[table["error"].notna()]
    if len(failed):
        print(f"{failed['run'].nunique()} runs could not be made:")
        print(failed.drop_duplicates("run")[["scheduler", "error"]].to_string())

    burst = table[table["class"] == "burst"].copy()
    burst["buffer_kb"] = [int(b["limit"].removesuffix("kb")) for b in burst["link.buffer"]]
    burst["loss"] = burst["packets_dropped"] / burst["packets_sent"]
    stats = (burst.groupby(["scheduler", "buffer_kb"], observed=True)
             .agg(p50=("delay_p50_s", "mean"), p50_sd=("delay_p50_s", "std"),
                  p99=("delay_p99_s", "mean"), p99_sd=("delay_p99_s", "std"),
                  loss=("loss", "mean"), loss_sd=("loss", "std"), n=("seed", "count"))
             .reset_index())
    print(stats.to_string(index=False))

    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    panels = [("p50", "median delay (ms)", 1e3), ("p99", "99th-percentile delay (ms)", 1e3),
              ("loss", "packets lost (%)", 1e2)]
    for ax, (col, label, scale) in zip(axes, panels):
        for sched in SCHEDULERS:
            s = stats[stats["scheduler"] == sched]
            mean = s[col].to_numpy() * scale
            half = T_95_9 * s[f"{col}_sd"].to_numpy() / np.sqrt(s["n"].to_numpy()) * scale
            ax.plot(s["buffer_kb"], mean, marker="o", label=sched)
            ax.fill_between(s["buffer_kb"], mean - half, mean + half, alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.set_xticks(BUFFERS_KB, [str(b) for b in BUFFERS_KB])
        ax.set_xlabel("shared buffer (KB, push-out)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[0].legend(title="scheduler")
    fig.suptitle("FSC paper's burst scenario (PBS 8, Poisson background): the 32-packet "
                 "burst class, mean of 10 seeds ± 95 % CI")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"figure written: {args.out}")


if __name__ == "__main__":
    main()
