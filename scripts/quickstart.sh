#!/usr/bin/env bash
# The main job, from nothing to a translation: set up, prepare Multi30k En->Fr (sentencepiece),
# train rnnsearch_small for a bounded CPU time, translate test_2016_flickr with beam search,
# score it with sacreBLEU, and translate one sentence through fairseq-interactive.
#
#   MULTI30K_DIR=../shared/data/multi30k bash scripts/quickstart.sh
#
# Environment: MULTI30K_DIR (local raw files; default: download from the official repository),
# WORK (output folder, default work/quickstart), TRAIN_MINUTES (default 20), ARCH (default
# rnnsearch_small; rnnencdec_small for the baseline), BEAM (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/activate.sh
WORK=${WORK:-work/quickstart}
TRAIN_MINUTES=${TRAIN_MINUTES:-20}
ARCH=${ARCH:-rnnsearch_small}
BEAM=${BEAM:-5}
DATA=$WORK/data
CHECKPOINTS=$WORK/checkpoints/$ARCH

echo "| 1/4 preparing Multi30k En->Fr in $DATA"
python scripts/prepare_data.py multi30k --scheme spm --out "$DATA"

echo "| 2/4 training $ARCH for $TRAIN_MINUTES minutes (best checkpoint by validation loss)"
fairseq-train "$DATA/bin" --user-dir rnnsearch_plugin --task translation -s en -t fr \
  --arch "$ARCH" --optimizer adam --lr 0.002 --lr-scheduler fixed --clip-norm 1.0 \
  --criterion cross_entropy --max-tokens 4000 \
  --stop-time-hours "$(python -c "print($TRAIN_MINUTES / 60)")" --validate-interval-updates 500 \
  --save-dir "$CHECKPOINTS" --no-epoch-checkpoints --save-interval-updates 500 --keep-interval-updates 1 \
  --log-interval 50 --num-workers 0 --seed 1

echo "| 3/4 translating test_2016_flickr (beam $BEAM) and scoring with sacreBLEU"
fairseq-generate "$DATA/bin" --user-dir rnnsearch_plugin -s en -t fr --gen-subset test \
  --path "$CHECKPOINTS/checkpoint_best.pt" --beam "$BEAM" --batch-size 128 \
  --remove-bpe sentencepiece > "$WORK/test.$ARCH.out"
rnnsearch-score "$WORK/test.$ARCH.out" --reference "$DATA/raw/test.fr" --output "$WORK/test.$ARCH.fr"

echo "| 4/4 fairseq-interactive"
echo "A little girl is climbing into a wooden playhouse." | fairseq-interactive "$DATA/bin" \
  --user-dir rnnsearch_plugin -s en -t fr --path "$CHECKPOINTS/checkpoint_best.pt" --beam "$BEAM" \
  --bpe sentencepiece --sentencepiece-model "$DATA/spm/spm.model" | grep -E '^(S|D)-'
