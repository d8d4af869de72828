#!/usr/bin/env bash
# The main job, from nothing to a translation: set up, prepare Multi30k En->Fr (sentencepiece),
# train rnnsearch_small for a fixed number of updates (capped in time), translate test_2016_flickr
# with beam search, score it with sacreBLEU, translate one sentence through fairseq-interactive,
# and write the paper's analyses (BLEU with and without <unk>, BLEU by length, alignments, AER) to
# WORK/report.
#
#   MULTI30K_DIR=../shared/data/multi30k bash scripts/quickstart.sh
#
# Training is bounded by updates, so that every machine trains the same model, with a time cap, so
# that a slow or busy machine still ends; a progress line a minute says how far it is, and the end
# says how many updates it made against a free 2-core machine and whether the model falls short
# (scripts/train_progress.py). Run it alone: it uses both cores (docs/training.md, "The quickstart").
#
# Environment: MULTI30K_DIR (local raw files; default: download from the official repository),
# SRC and TGT (the direction: en and fr by default, or fr and en), WORK (output folder, default
# work/quickstart, work/quickstart.fr-en for Fr->En), MAX_UPDATE (default: the recipe's, 2000),
# TRAIN_MINUTES (the time cap, default 75; a rerun with the same WORK resumes where the last one
# stopped), ARCH (default: the recipe's, rnnsearch_small; rnnencdec_small for the baseline), BEAM
# (default 5), AMP (default 1: --amp, bfloat16 products where the processor has them, else one line
# and float32; 0: float32), ALIGNMENT_GOLD_DIR (the Hansards' gold alignments for the AER; default:
# alignment-gold beside MULTI30K_DIR where it is there, else downloaded into WORK/data/download, from
# ALIGNMENT_GOLD_MIRROR instead of their public repository where that is set).
# The recipe it trains is configs/quickstart.yaml (scripts/recipe.py writes it as fairseq-train's options).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/activate.sh
SRC=${SRC:-en}
TGT=${TGT:-fr}
if [[ "$SRC-$TGT" == en-fr ]]; then WORK=${WORK:-work/quickstart}; else WORK=${WORK:-work/quickstart.$SRC-$TGT}; fi
RECIPE=configs/quickstart.yaml
MAX_UPDATE=${MAX_UPDATE:-$(python scripts/recipe.py "$RECIPE" --get optimization.max_update)}
TRAIN_MINUTES=${TRAIN_MINUTES:-75}
ARCH=${ARCH:-$(python scripts/recipe.py "$RECIPE" --get model._name)}
BEAM=${BEAM:-5}
PRECISION=()
AMP_ON=false
[[ "${AMP:-1}" == 1 ]] && PRECISION=(--amp) && AMP_ON=true
DATA=$WORK/data
CHECKPOINTS=$WORK/checkpoints/$ARCH

echo "| 1/5 preparing Multi30k $SRC->$TGT in $DATA"
python scripts/prepare_data.py multi30k -s "$SRC" -t "$TGT" --scheme spm --out "$DATA"

echo "| 2/5 training $ARCH for $MAX_UPDATE updates, at most $TRAIN_MINUTES minutes (best checkpoint by validation loss; every line in $CHECKPOINTS/train.log)"
mkdir -p "$CHECKPOINTS"  # fairseq opens --log-file before it creates --save-dir
PROGRESS=(--max-update "$MAX_UPDATE" --minutes "$TRAIN_MINUTES")
TRAINING=$(python scripts/recipe.py "$RECIPE" "common.amp=$AMP_ON" -- --arch "$ARCH" --max-update "$MAX_UPDATE")
mapfile -t TRAINING <<< "$TRAINING"
fairseq-train "$DATA/bin" --user-dir rnnsearch_plugin -s "$SRC" -t "$TGT" "${TRAINING[@]}" \
  --stop-time-hours "$(python -c "print($TRAIN_MINUTES / 60)")" --save-dir "$CHECKPOINTS" --log-file "$CHECKPOINTS/train.log" 2>&1 \
  | python scripts/train_progress.py watch "${PROGRESS[@]}"
VERDICT=$(python scripts/train_progress.py summary "$CHECKPOINTS/train.log" "${PROGRESS[@]}" --arch "$ARCH")
echo "$VERDICT"

echo "| 3/5 translating test_2016_flickr (beam $BEAM) and scoring with sacreBLEU"
fairseq-generate "$DATA/bin" --user-dir rnnsearch_plugin -s "$SRC" -t "$TGT" --gen-subset test \
  --path "$CHECKPOINTS/checkpoint_best.pt" --beam "$BEAM" --batch-size 128 \
  --remove-bpe sentencepiece "${PRECISION[@]}" > "$WORK/test.$ARCH.out"
rnnsearch-score "$WORK/test.$ARCH.out" --reference "$DATA/raw/test.$TGT" --output "$WORK/test.$ARCH.$TGT"

echo "| 4/5 fairseq-interactive"
EXAMPLE="A little girl is climbing into a wooden playhouse."  # other sources: the first dev sentence
[[ "$SRC" == en ]] || EXAMPLE=$(head -n 1 "$DATA/raw/valid.$SRC")
echo "$EXAMPLE" | fairseq-interactive "$DATA/bin" \
  --user-dir rnnsearch_plugin -s "$SRC" -t "$TGT" --path "$CHECKPOINTS/checkpoint_best.pt" --beam "$BEAM" \
  --bpe sentencepiece --sentencepiece-model "$DATA/spm/spm.model" | grep -E '^(S|D)-'

echo "| 5/5 the paper's analyses in $WORK/report: Table 1 (All / No UNK), Figure 2, Table 2, Figure 3, AER"
rnnsearch-evaluate --prepared "$DATA" --split test --system "$ARCH=$CHECKPOINTS/checkpoint_best.pt" \
  --generated "$ARCH=$WORK/test.$ARCH.out" --train-log "$ARCH=$CHECKPOINTS/train.log" --beam "$BEAM" \
  --out "$WORK/report"
if [[ "$ARCH" == rnnsearch* ]]; then
  rnnsearch-heatmaps --path "$CHECKPOINTS/checkpoint_best.pt" --data "$DATA/bin" --input "$DATA/raw/test.$SRC" \
    --ids 0,1,2 --beam "$BEAM" --out "$WORK/report/alignments"
  GOLD=${ALIGNMENT_GOLD_DIR:-$(dirname "${MULTI30K_DIR:-.}")/alignment-gold}
  [[ -n "${ALIGNMENT_GOLD_DIR:-}" || -f "$GOLD/dev.wa.nonullalign" ]] || GOLD=$DATA/download/alignment-gold
  if [[ "$SRC-$TGT" != en-fr && "$SRC-$TGT" != fr-en ]]; then  # rnnsearch-aer transposes it for fr-en
    echo "| the alignment gold standard aligns English with French: no AER for $SRC->$TGT"
  elif ! rnnsearch-aer --path "$CHECKPOINTS/checkpoint_best.pt" --data "$DATA/bin" --gold "$GOLD" --download-gold \
    ${ALIGNMENT_GOLD_MIRROR:+--gold-mirror "$ALIGNMENT_GOLD_MIRROR"} --out "$WORK/report"; then
    echo "| no AER (the line above says why): set ALIGNMENT_GOLD_DIR to a folder that holds the gold standard"
  fi
fi

echo "$VERDICT"
