#!/usr/bin/env bash
# The paper's three claims on a 2-core CPU (docs/results/README.md has the figures of one run):
# RNNsearch beats RNNencdec (and fairseq's lstm) on Multi30k En->Fr, its lead grows with
# sentence length on the Canadian Hansards, and its soft alignments beat the diagonal (AER).
#
#   MULTI30K_DIR=../shared/data/multi30k HANSARDS_DIR=../shared/data/hansards \
#     bash scripts/reproduce_results.sh              # all stages, about 2.5 hours
#   bash scripts/reproduce_results.sh hansards     # one stage (they run in this order)
#
# Stages: prepare; multi30k (rnnsearch_small beside fairseq's lstm at matched sizes); hansards
# (rnnsearch_small beside rnnencdec_small); multi30k-rnnencdec (rnnencdec_small, beside the
# Hansards evaluation); evaluate (Multi30k); publish (copies the small results into $RESULTS).
# Every model trains for MINUTES (default 45) of wall time with the same options, one thread
# pinned to one core, two at a time (one per core), except those chosen for each model on the
# validation sets: MULTI30K_DROPOUT (default 0.5) for rnnsearch_small and rnnencdec_small on
# Multi30k, with, for rnnsearch_small there, MAXOUT_DROPOUT (--decoder-dropout-out, default 0.4),
# ANNOTATION_DROPOUT (--encoder-dropout-out, default 0.3) and READOUT_STATE (--readout-state,
# default current), and its learning rate RNNSEARCH_LR (default 0.003), multiplied by
# RNNSEARCH_LR_SHRINK (default 0.5, below 1) at every epoch's end where the dev loss did not
# improve (fairseq's reduce_lr_on_plateau); LSTM_DROPOUT (default 0.3) for the lstm;
# HANSARDS_DROPOUT (default 0; 45 minutes is at most half an epoch of the Hansards, nothing to
# overfit). Every other run keeps the fixed rate of 0.002.
# Environment: WORK (default work/results), RESULTS (default docs/results), MINUTES, BEAM
# (default 5), SEED (fairseq-train's --seed, default 1), MULTI30K_DIR, HANSARDS_DIR,
# ALIGNMENT_GOLD_DIR (default beside HANSARDS_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
STAGES=(prepare multi30k hansards multi30k-rnnencdec evaluate publish)
for stage in "$@"; do
  [[ " ${STAGES[*]} " == *" $stage "* ]] || { echo "reproduce_results.sh: error: unknown stage '$stage' (stages: ${STAGES[*]})" >&2; exit 2; }
done
bash scripts/setup.sh
source scripts/activate.sh
WORK=${WORK:-work/results}
RESULTS=${RESULTS:-docs/results}
MINUTES=${MINUTES:-45}
BEAM=${BEAM:-5}
SEED=${SEED:-1}
MULTI30K_DROPOUT=${MULTI30K_DROPOUT:-0.5}
ANNOTATION_DROPOUT=${ANNOTATION_DROPOUT:-0.3}
MAXOUT_DROPOUT=${MAXOUT_DROPOUT:-0.4}
READOUT_STATE=${READOUT_STATE:-current}
RNNSEARCH_LR=${RNNSEARCH_LR:-0.003}
RNNSEARCH_LR_SHRINK=${RNNSEARCH_LR_SHRINK:-0.5}
LSTM_DROPOUT=${LSTM_DROPOUT:-0.3}
HANSARDS_DROPOUT=${HANSARDS_DROPOUT:-0}
HANSARDS_DIR=${HANSARDS_DIR:-../shared/data/hansards}
GOLD=${ALIGNMENT_GOLD_DIR:-$(dirname "$HANSARDS_DIR")/alignment-gold}
LSTM=(--arch lstm --encoder-bidirectional --encoder-embed-dim 256 --decoder-embed-dim 256 --encoder-hidden-size 256
      --decoder-hidden-size 256 --decoder-out-embed-dim 256 --dropout "$LSTM_DROPOUT")
FIXED_RATE=(--lr 0.002 --lr-scheduler fixed)
RNNSEARCH_RATE=(--lr "$RNNSEARCH_LR" --lr-scheduler reduce_lr_on_plateau --lr-shrink "$RNNSEARCH_LR_SHRINK" --lr-patience 0)

log() { echo "| $(date -u +%H:%M:%S) $*"; }

# on_core CORE COMMAND...: one thread, pinned to CORE, wall time appended to $WORK/wall_times.tsv
on_core() {
  local core=$1 start; shift
  start=$(date +%s)
  OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 taskset -c "$core" "$@"
  printf '%s\t%s\t%d\n' "$(basename "$1")" "${*: -1}" "$(( $(date +%s) - start ))" >> "$WORK/wall_times.tsv"
}

# train CORE CORPUS NAME FAIRSEQ_OPTIONS...: the quickstart's Adam set-up for MINUTES with the
# given model and learning-rate options, validated every 500 updates and at every epoch's end,
# best checkpoint by validation loss. Our models take the plugin's chunked_cross_entropy (the
# same loss without B x T x vocabulary tensors), fairseq's lstm fairseq's cross_entropy.
train() {
  local core=$1 corpus=$2 name=$3; shift 3
  local dir=$WORK/checkpoints/$corpus/$name criterion=chunked_cross_entropy
  [[ "$name" == lstm* ]] && criterion=cross_entropy
  mkdir -p "$dir"
  log "training $name on $corpus (core $core, $MINUTES minutes): $dir/train.log"
  on_core "$core" fairseq-train "$WORK/$corpus/bin" --user-dir rnnsearch_plugin --task translation -s en -t fr "$@" \
    --optimizer adam --clip-norm 1.0 --criterion "$criterion" --max-tokens 4000 \
    --stop-time-hours "$(python -c "print($MINUTES / 60)")" --validate-interval-updates 500 \
    --save-dir "$dir" --no-epoch-checkpoints --save-interval-updates 500 --keep-interval-updates 1 \
    --log-interval 100 --num-workers 0 --data-buffer-size 0 --seed "$SEED" --log-file "$dir/train.log" > /dev/null
}

# wait_jobs: wait for every background job, failing (set -e) if one of them failed
wait_jobs() {
  local pid
  for pid in $(jobs -p); do wait "$pid"; done
}

checkpoint() { echo "$WORK/checkpoints/$1/$2/checkpoint_best.pt"; }

# evaluate CORE CORPUS SPLIT NAME...: rnnsearch-evaluate of the named systems into $WORK/report/CORPUS.SPLIT
evaluate() {
  local core=$1 corpus=$2 split=$3; shift 3
  local args=() name
  for name in "$@"; do
    args+=(--system "$name=$(checkpoint "$corpus" "$name")" --train-log "$name=$WORK/checkpoints/$corpus/$name/train.log")
  done
  log "evaluating $* on $corpus $split (core $core)"
  on_core "$core" rnnsearch-evaluate --prepared "$WORK/$corpus" --split "$split" --beam "$BEAM" --lowercase \
    "${args[@]}" --out "$WORK/report/$corpus.$split"
}

# alignments CORE CORPUS: Figure 3 heatmaps and the AER of the corpus's RNNsearch model
alignments() {
  local core=$1 corpus=$2
  on_core "$core" rnnsearch-heatmaps --path "$(checkpoint "$corpus" rnnsearch_small)" --data "$WORK/$corpus/bin" \
    --input "$WORK/$corpus/raw/test.en" --ids 0,1,2 --beam "$BEAM" --out "$WORK/report/$corpus.alignments"
  on_core "$core" rnnsearch-aer --path "$(checkpoint "$corpus" rnnsearch_small)" --data "$WORK/$corpus/bin" \
    --gold "$GOLD" --out "$WORK/report/$corpus.aer"
}

stage_prepare() {
  mkdir -p "$WORK"
  python scripts/prepare_data.py multi30k --scheme spm --out "$WORK/multi30k"
  python scripts/prepare_data.py hansards --scheme spm --out "$WORK/hansards" --local-dir "$HANSARDS_DIR"
}
stage_multi30k() {
  train 0 multi30k rnnsearch_small --arch rnnsearch_small --dropout "$MULTI30K_DROPOUT" \
    --decoder-dropout-out "$MAXOUT_DROPOUT" --encoder-dropout-out "$ANNOTATION_DROPOUT" --readout-state "$READOUT_STATE" \
    "${RNNSEARCH_RATE[@]}" &
  train 1 multi30k lstm "${LSTM[@]}" "${FIXED_RATE[@]}" &
  wait_jobs
}
stage_hansards() {
  train 0 hansards rnnsearch_small --arch rnnsearch_small --dropout "$HANSARDS_DROPOUT" "${FIXED_RATE[@]}" &
  train 1 hansards rnnencdec_small --arch rnnencdec_small --dropout "$HANSARDS_DROPOUT" "${FIXED_RATE[@]}" &
  wait_jobs
}
stage_multi30k_rnnencdec() {
  train 0 multi30k rnnencdec_small --arch rnnencdec_small --dropout "$MULTI30K_DROPOUT" "${FIXED_RATE[@]}" &
  {
    evaluate 1 hansards test rnnsearch_small rnnencdec_small
    alignments 1 hansards
  } &
  wait_jobs
}
stage_evaluate() {
  evaluate 0 multi30k test rnnsearch_small rnnencdec_small lstm &
  {
    evaluate 1 multi30k test1 rnnsearch_small rnnencdec_small lstm
    alignments 1 multi30k
  } &
  wait_jobs
}
stage_publish() {
  python scripts/publish_results.py --work "$WORK" --out "$RESULTS"
}

for stage in "${@:-${STAGES[@]}}"; do
  log "stage $stage"
  "stage_${stage//-/_}"
done
