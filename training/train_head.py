"""Trains the overlap head on the feature table from `npm run train:data` and exports it to ONNX.

    nice -n 10 /usr/bin/python3 training/train_head.py [--data out/training] [--out gpu-worker/models/overlap-head]
                                                        [--epochs 300] [--seed 1] [--threads 2]
                                                        [--exclude-voices P1,P2 --predict-out FILE]

With --exclude-voices the TRAIN clips in those voices are left out and, instead of exporting a
model, the head's probabilities on their rows go to --predict-out (one fold of
`npm run train:folds`, which chooses the decision policy on training voices only).

A two-layer MLP (FEATURE_COUNT -> HIDDEN -> 4, ReLU, dropout on its input and hidden layer while
training) over the standardised features (the hand-made statistics, the word cues and the 2 x 96
speech-embedding values), the standardisation and the softmax baked into the graph, so the ONNX
file takes the raw feature rows the worker computes. Trained on the TRAIN split only (full batch,
Adam, weight decay); each clip weighs the same whatever its number of decision points; classes are
balanced. Writes
overlap-head.onnx (opset 13), training.json (recipe, data size, train accuracy, torch outputs on
sample rows for the ONNX check in training/evaluate.ts).
"""
import argparse
import csv
import json
import os
from collections import Counter

import numpy as np
import torch

CLASSES = ["interruption", "backchannel", "other_directed", "background"]

parser = argparse.ArgumentParser()
parser.add_argument("--data", default="out/training")
parser.add_argument("--out", default="gpu-worker/models/overlap-head")
parser.add_argument("--epochs", type=int, default=300)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--threads", type=int, default=2)
parser.add_argument("--hidden", type=int, default=64)
parser.add_argument("--dropout", type=float, default=0.2)
parser.add_argument("--weight-decay", type=float, default=1e-3)
parser.add_argument(
    "--exclude-voices",
    default="",
    help="comma-separated voice prefixes: TRAIN clips in these voices are left out of training (a fold)",
)
parser.add_argument(
    "--predict-out",
    default="",
    help="with --exclude-voices: write the head's probabilities on the left-out clips' rows to this CSV",
)
parser.add_argument(
    "--early-weight",
    type=float,
    default=1.0,
    help="weight of the rows at most --early-ms into their burst, against 1 for the rest (1: the committed recipe)",
)
parser.add_argument("--early-ms", type=float, default=320)
args = parser.parse_args()

torch.manual_seed(args.seed)
np.random.seed(args.seed)
torch.set_num_threads(args.threads)

with open(os.path.join(args.data, "clips.csv")) as f:
    voice_of = {r["clip"]: r["voice"] for r in csv.DictReader(f)}
excluded_prefixes = [v for v in args.exclude_voices.split(",") if v]


def left_out(clip: str) -> bool:
    return any(voice_of.get(clip, "").startswith(v) for v in excluded_prefixes)


with open(os.path.join(args.data, "features.csv")) as f:
    reader = csv.reader(f)
    header = next(reader)
    all_train = [r for r in reader if r[1] == "train"]
rows = [r for r in all_train if not left_out(r[0])]
fold_rows = [r for r in all_train if left_out(r[0])]
names = header[4:]
x = np.array([[float(v) for v in r[4:]] for r in rows], dtype=np.float32)
y = np.array([CLASSES.index(r[2]) for r in rows], dtype=np.int64)
clips = [r[0] for r in rows]
per_clip = Counter(clips)
clip_classes = {r[0]: r[2] for r in rows}
clips_per_class = Counter(clip_classes.values())
w = np.array([1.0 / per_clip[c] / clips_per_class[clip_classes[c]] for c in clips], dtype=np.float32)
w = w * np.array([args.early_weight if float(r[3]) <= args.early_ms else 1.0 for r in rows], dtype=np.float32)
w = w / w.sum()

mean = x.mean(axis=0)
std = x.std(axis=0)
std[std < 1e-4] = 1.0


class Head(torch.nn.Module):
    def __init__(self, n_in: int, hidden: int):
        super().__init__()
        self.register_buffer("mean", torch.from_numpy(mean))
        self.register_buffer("std", torch.from_numpy(std))
        self.net = torch.nn.Sequential(
            torch.nn.Dropout(args.dropout),
            torch.nn.Linear(n_in, hidden),
            torch.nn.ReLU(),
            torch.nn.Dropout(args.dropout),
            torch.nn.Linear(hidden, len(CLASSES)),
        )

    def logits(self, features):
        return self.net((features - self.mean) / self.std)

    def forward(self, features):
        return torch.softmax(self.logits(features), dim=-1)


model = Head(x.shape[1], args.hidden)
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=args.weight_decay)
xt, yt, wt = torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(w)
model.train()
for epoch in range(args.epochs):
    opt.zero_grad()
    loss = (torch.nn.functional.cross_entropy(model.logits(xt), yt, reduction="none") * wt).sum()
    loss.backward()
    opt.step()
model.eval()
with torch.no_grad():
    probs = model(xt)
    accuracy = float((probs.argmax(dim=-1) == yt).float().mean())

if args.predict_out:
    # Out-of-fold probabilities, for choosing the decision policy on training voices only.
    with torch.no_grad():
        fold_probs = model(torch.tensor([[float(v) for v in r[4:]] for r in fold_rows], dtype=torch.float32)).tolist()
    with open(args.predict_out, "w") as f:
        f.write("clip,elapsed_ms,ended,p_interruption,p_backchannel,p_other_directed,p_background\n")
        ended_at = names.index("ended") + 4
        for r, p in zip(fold_rows, fold_probs):
            f.write(",".join([r[0], r[3], r[ended_at]] + [f"{v:.6f}" for v in p]) + "\n")
    print(f"fold without {args.exclude_voices}: {len(x)} training rows; {len(fold_rows)} left-out rows -> {args.predict_out}")
    raise SystemExit(0)

os.makedirs(args.out, exist_ok=True)
onnx_path = os.path.join(args.out, "overlap-head.onnx")
torch.onnx.export(
    model,
    xt[:1],
    onnx_path,
    input_names=["features"],
    output_names=["probs"],
    dynamic_axes={"features": {0: "n"}, "probs": {0: "n"}},
    opset_version=13,
)
sample = list(range(0, len(x), max(1, len(x) // 32)))[:32]
with torch.no_grad():
    sample_probs = model(xt[sample]).tolist()
report = {
    "classes": CLASSES,
    "features": names,
    "recipe": {
        "model": f"MLP {x.shape[1]}-{args.hidden}-{len(CLASSES)}, ReLU, softmax; dropout {args.dropout} on input and hidden layer in training",
        "optimiser": f"Adam lr 0.01, weight decay {args.weight_decay:g}, full batch",
        "epochs": args.epochs,
        "seed": args.seed,
        "weighting": "each clip equal, classes balanced",
        "torch": torch.__version__,
        "opset": 13,
    },
    "data": {"train_rows": len(x), "train_clips": len(per_clip), "clips_per_class": dict(clips_per_class)},
    "final_loss": float(loss),
    "train_row_accuracy": accuracy,
    "check": {"rows": x[sample].tolist(), "torch_probs": sample_probs},
}
with open(os.path.join(args.out, "training.json"), "w") as f:
    json.dump(report, f, indent=1)
print(f"{len(x)} rows from {len(per_clip)} clips; loss {float(loss):.3f}; train row accuracy {accuracy:.3f}; -> {onnx_path}")
