#!/usr/bin/env bash
# The paper's comparisons on a 2-core CPU (docs/results/README.md has the figures of one run):
# RNNsearch beats RNNencdec trained the same way, its lead grows with sentence length (Canadian
# Hansards at the paper's word level), its soft alignments beat the diagonal (AER), and it beats
# fairseq's lstm on Multi30k En->Fr over three seeds after equal tuning trials on dev.
#
#   MULTI30K_DIR=../shared/data/multi30k HANSARDS_DIR=../shared/data/hansards \
#     bash tooling/reproduce_results.sh              # all stages, about 6 hours
#   bash tooling/reproduce_results.sh hansards     # one stage (they run in this order)
#
# Stages, each of which fits in a 3-hour working session (a training interrupted mid-stage
# resumes from its checkpoint_last.pt, and --stop-time-hours counts the time it already had; a
# finished one is not run again):
#   prepare            Multi30k (sentencepiece) and the Hansards at word level: 30,000-word
#                      shortlists per language, training pairs of up to 50 words
#   hansards           RNNsearch-50 and RNNencdec-50 (rnnsearch_small, rnnencdec_small), the same
#                      recipe (HANSARDS_OPTIONS), HANSARDS_MINUTES each (default 125)
#   hansards-evaluate  Table 1 (All, No UNK), Figure 2, Appendix C, Figure 3, AER
#   multi30k-dropout, multi30k-rate
#                      the tuning trials on dev, the same for RNNsearch and the lstm
#   multi30k-seeds     the chosen settings with seeds 2 and 3 (seed 1 is the trial itself)
#   multi30k-pair      RNNencdec with RNNsearch's chosen options; RNNsearch with B.2's recipe
#   multi30k-evaluate  test_2016 and test_2017 for every Multi30k system
#   multi30k-directions
#                      the quickstart's recipe as it is (its 2,000 updates too) En->Fr and Fr->En,
#                      one core each, at most DIRECTION_MINUTES each (default 60), evaluated on
#                      test_2016 and test_2017
#   hansards-fr-en     RNNsearch-50 Fr->En at the paper's word level, as the hansards stage trains
#                      it En->Fr (HANSARDS_OPTIONS, HANSARDS_MINUTES), evaluated like it, heatmaps
#   hansards-align     the model as an aligner: AER, precision and recall on the gold of
#                      eflomal and fast_align's model (each direction, symmetrised) and RNNsearch
#                      (each direction, argmax, threshold, symmetrised), with wall times;
#                      rnnsearch-align on the test set
#   hansards-guided    RNNsearch-50 En->Fr trained with eflomal's links as guidance (not the
#                      paper's) beside the unguided one, then one with an alignment head trained
#                      jointly toward the links, HANSARDS_MINUTES each, all evaluated for BLEU, the
#                      guided one's and the joint head's links for AER
#   hansards-head      the alignment head (not the paper's) added to the hansards stage's RNNsearch-50 and
#                      trained alone, its translation frozen, HEAD_MINUTES each (default 20), one after another:
#                      toward eflomal's links (causal, then full context), by its own objective, full context
#                      on the Fr->En model too (both directions' heads symmetrised), and toward the links for
#                      three times as long; each one's links scored on the gold, rnnsearch-align timed with
#                      the head on the test pairs
#   publish            docs/results from WORK/report (tooling/publish_results.py)
# Every model trains on one thread pinned to one core, two at a time (one per core), with the
# quickstart's recipe (configs/quickstart.yaml: rnnsearch_small, Adam at a fixed rate, clipping,
# chunked_cross_entropy and --amp, its batch size and validation interval) for its stage's
# minutes, each stage changing what it compares (B.2's Adadelta in multi30k-pair), and is
# evaluated at its best validation loss with beam BEAM. --amp: bfloat16 products where the
# processor has them (AMP=0: float32); fairseq's lstm trains in float32 (fairseq's --amp does
# nothing on a CPU) with cross_entropy.
# Environment: WORK (default work/results), RESULTS (default docs/results), MINUTES (Multi30k,
# default 20), HANSARDS_MINUTES, HEAD_MINUTES, BEAM (default 5), AMP, MULTI30K_DIR, HANSARDS_DIR,
# ALIGNMENT_GOLD_DIR (default beside HANSARDS_DIR), SETUP (0: skip scripts/setup.sh, for an
# environment already set up).
set -euo pipefail
cd "$(dirname "$0")/.."
STAGES=(prepare hansards hansards-evaluate multi30k-dropout multi30k-rate multi30k-seeds multi30k-pair multi30k-evaluate
        multi30k-directions hansards-fr-en hansards-align hansards-guided hansards-head publish)
for stage in "$@"; do
  [[ " ${STAGES[*]} " == *" $stage "* ]] || { echo "reproduce_results.sh: error: unknown stage '$stage' (stages: ${STAGES[*]})" >&2; exit 2; }
done
[[ "${SETUP:-1}" == 0 ]] || bash scripts/setup.sh
source scripts/activate.sh
WORK=${WORK:-work/results}
RESULTS=${RESULTS:-docs/results}
MINUTES=${MINUTES:-20}
HANSARDS_MINUTES=${HANSARDS_MINUTES:-125}
DIRECTION_MINUTES=${DIRECTION_MINUTES:-60}
HEAD_MINUTES=${HEAD_MINUTES:-20}
BEAM=${BEAM:-5}
HANSARDS_DIR=${HANSARDS_DIR:-../shared/data/hansards}
GOLD=${ALIGNMENT_GOLD_DIR:-$(dirname "$HANSARDS_DIR")/alignment-gold}
RECIPE=configs/quickstart.yaml  # the recipe every training starts from (scripts/recipe.py)
AMP_ON=false
[[ "${AMP:-1}" == 1 ]] && AMP_ON=true
# B.2: Adadelta (rho 0.95, eps 1e-6, lr 1), gradients rescaled to norm 1, 80 sentences a batch, loss per sentence
PAPER_RECIPE=(--optimizer rnnsearch_adadelta --adadelta-rho 0.95 --adadelta-eps 1e-6 --lr 1.0 --lr-scheduler fixed
              --clip-norm 1.0 --batch-size 80 --sentence-avg)
# The Hansards pair shares one setting, fixed beforehand: the quickstart's recipe (Adam's fixed
# rate) without dropout (two hours are about two epochs of 624,293 pairs for models of 256 units,
# too little to overfit)
HANSARDS_OPTIONS=(--dropout 0)
# The Hansards as every stage prepares them (after -s/-t and before --out): the paper's word level
HANSARDS_DATA=(--scheme word --shortlist 30000 --max-len 50 --local-dir "$HANSARDS_DIR")
# The soft alignments' thresholds rnnsearch-aer scores on the Hansards gold (a row each; the best
# row is chosen on these 37 sentences, the only gold here)
THRESHOLDS=(0.1 0.2 0.3 0.4 0.5)
# Multi30k tuning trials on dev, the same option strings for RNNsearch and the lstm: three
# dropout settings (embeddings and outputs; encoder outputs = annotations) at the recipe's fixed
# rate (FIXED_RATE), then three rates and schedules with the better dropout
# (reduce_lr_on_plateau halves the rate at each epoch's end where the dev loss did not improve)
DROPOUT_TRIALS=("--dropout 0.3 --encoder-dropout-out 0.3" "--dropout 0.5 --encoder-dropout-out 0.5"
                "--dropout 0.5 --encoder-dropout-out 0.3 --decoder-dropout-out 0.3")
RATE_TRIALS=("--lr 0.003 --lr-scheduler reduce_lr_on_plateau --lr-shrink 0.5 --lr-patience 0"
             "--lr 0.002 --lr-scheduler reduce_lr_on_plateau --lr-shrink 0.5 --lr-patience 0"
             "--lr 0.003 --lr-scheduler fixed")
FIXED_RATE="--lr $(python scripts/recipe.py "$RECIPE" --get optimization.lr) --lr-scheduler $(python scripts/recipe.py "$RECIPE" --get lr_scheduler._name)"
# fairseq's lstm at our small sizes (256), attention over a bidirectional encoder
LSTM_OPTIONS=$(python -c 'import sys; sys.path.insert(0, "tooling"); from benchmarking.variants import lstm_options; print(*lstm_options())')
read -ra LSTM <<< "$LSTM_OPTIONS"

log() { echo "| $(date -u +%H:%M:%S) $*"; }

# pair CORPUS: the source and target language of the prepared folder WORK/CORPUS (its manifest,
# else its fairseq files; En->Fr for a folder that names neither, as the first prepared folders)
pair() {
  python -c 'import sys; from pathlib import Path; from rnnsearch_plugin.hub import data_pair
from rnnsearch_plugin.data.languages import DEFAULT_PAIR
print(*(data_pair(Path(sys.argv[1])) or DEFAULT_PAIR))' "$WORK/$1/bin"
}

# on_core CORE COMMAND...: one thread, pinned to CORE, wall time appended to $WORK/wall_times.tsv
on_core() {
  local core=$1 start; shift
  start=$(date +%s)
  OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 taskset -c "$core" "$@"
  printf '%s\t%s\t%d\n' "$(basename "$1")" "${*: -1}" "$(( $(date +%s) - start ))" >> "$WORK/wall_times.tsv"
}

# train CORE CORPUS NAME MINUTES [KEY=VALUE...] [FAIRSEQ_OPTIONS...]: the quickstart's recipe for
# MINUTES of training (counted over restarts: a folder with a checkpoint_last.pt resumes; one whose
# log says the run finished is left as it is, so that a stage run again trains only what it has
# not finished) rather than its updates, logged every 100 updates, with the overrides (KEY=VALUE,
# e.g. optimization.max_update=2000) and the options (each in the place of the recipe's option of
# that name: scripts/recipe.py), best checkpoint by validation loss. fairseq's lstm trains in
# float32 with cross_entropy (our models' chunked_cross_entropy: the same loss without the B x T
# x vocabulary tensors, which the lstm's output layer has too).
train() {
  local core=$1 corpus=$2 name=$3 minutes=$4; shift 4
  local dir=$WORK/checkpoints/$corpus/$name overrides=()
  local run=(optimization.max_update=null common.log_format=null common.log_interval=100 "common.amp=$AMP_ON")
  [[ " $* " == *" --arch lstm "* ]] && run+=(common.amp=false criterion._name=cross_entropy)
  while [[ $# -gt 0 && $1 != -* ]]; do overrides+=("$1"); shift; done
  if grep -qs "^done training in" "$dir/train.log"; then
    log "$name on $corpus has finished ($dir/train.log): not run again (move the folder away to rerun it)"
    return
  fi
  local langs options
  read -ra langs <<< "$(pair "$corpus")"
  options=$(python scripts/recipe.py "$RECIPE" "${run[@]}" "${overrides[@]}" -- "$@")
  mapfile -t options <<< "$options"
  mkdir -p "$dir"
  log "training $name on $corpus (core $core, $minutes minutes): $dir/train.log"
  on_core "$core" fairseq-train "$WORK/$corpus/bin" --user-dir rnnsearch_plugin -s "${langs[0]}" -t "${langs[1]}" "${options[@]}" \
    --stop-time-hours "$(python -c "print($minutes / 60)")" --save-dir "$dir" --log-file "$dir/train.log" > /dev/null
}

# wait_jobs: wait for every background job, failing (set -e) if one of them failed
wait_jobs() {
  local pid
  for pid in $(jobs -p); do wait "$pid"; done
}

checkpoint() { echo "$WORK/checkpoints/$1/$2/checkpoint_best.pt"; }

# evaluate CORE CORPUS SPLIT NAME...: rnnsearch-evaluate of the named systems into $WORK/report/CORPUS.SPLIT
# (REPORT=OTHER.SPLIT: into $WORK/report/OTHER.SPLIT)
evaluate() {
  local core=$1 corpus=$2 split=$3; shift 3
  local report=${REPORT:-$corpus}.$split
  local args=() name
  for name in "$@"; do
    args+=(--system "$name=$(checkpoint "$corpus" "$name")" --train-log "$name=$WORK/checkpoints/$corpus/$name/train.log")
  done
  log "evaluating $* on $corpus $split (core $core)"
  on_core "$core" rnnsearch-evaluate --prepared "$WORK/$corpus" --split "$split" --beam "$BEAM" --lowercase \
    "${args[@]}" --out "$WORK/report/$report"
}

# heatmaps CORE CORPUS NAME: Figure 3, the first three test sentences, into $WORK/report/CORPUS.alignments
heatmaps() {
  local langs
  read -ra langs <<< "$(pair "$2")"
  on_core "$1" rnnsearch-heatmaps --path "$(checkpoint "$2" "$3")" --data "$WORK/$2/bin" \
    --input "$WORK/$2/raw/test.${langs[0]}" --ids 0,1,2 --beam "$BEAM" --out "$WORK/report/$2.alignments"
}

stage_prepare() {
  python scripts/prepare_data.py multi30k --scheme spm --out "$WORK/multi30k"
  python scripts/prepare_data.py hansards "${HANSARDS_DATA[@]}" --out "$WORK/hansards"
}
stage_hansards() {
  train 0 hansards rnnsearch_small "$HANSARDS_MINUTES" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}" &
  train 1 hansards rnnencdec_small "$HANSARDS_MINUTES" --arch rnnencdec_small "${HANSARDS_OPTIONS[@]}" &
  wait_jobs
}
stage_hansards_evaluate() {
  evaluate 0 hansards test rnnsearch_small rnnencdec_small &
  {
    heatmaps 1 hansards rnnsearch_small
    on_core 1 rnnsearch-aer --path "$(checkpoint hansards rnnsearch_small)" --data "$WORK/hansards/bin" --gold "$GOLD" \
      --out "$WORK/report/hansards.aer"
  } &
  wait_jobs
}

# arch_options MODEL: the architecture options of rnnsearch_small, rnnencdec_small or lstm
arch_options() {
  case $1 in
    lstm) echo "${LSTM[*]}" ;;
    *) echo "--arch $1" ;;
  esac
}

# trial CORE MODEL NUMBER DROPOUT RATE: tuning trial NUMBER of MODEL on Multi30k (the recipe's seed, 1); the
# folder keeps its dropout and rate options for the stages that pick the best trial
trial() {
  local core=$1 model=$2 number=$3 dropout=$4 rate=$5 dir=$WORK/checkpoints/multi30k/$2.t$3
  mkdir -p "$dir"
  echo "$dropout" > "$dir/dropout.txt"
  echo "$rate" > "$dir/rate.txt"
  # shellcheck disable=SC2046,SC2086  # the option strings split into words on purpose
  train "$core" multi30k "$model.t$number" "$MINUTES" $(arch_options "$model") $dropout $rate
}

# best MODEL LAST: the folder of MODEL's trial, 1 to LAST, with the lowest validation loss
best() {
  local folders=() n
  for n in $(seq 1 "$2"); do folders+=("$WORK/checkpoints/multi30k/$1.t$n"); done
  python tooling/best_trial.py "${folders[@]}"
}

# seed CORE MODEL SEED: MODEL's chosen trial (MODEL.seed1) again with another seed, as MODEL.seedSEED
seed() {
  local options
  options=$(cat "$WORK/checkpoints/multi30k/$2.seed1/dropout.txt" "$WORK/checkpoints/multi30k/$2.seed1/rate.txt")
  # shellcheck disable=SC2046,SC2086
  train "$1" multi30k "$2.seed$3" "$MINUTES" $(arch_options "$2") $options --seed "$3"
}

# Each command substitution below is an assignment of its own, so that its failure stops the script.
stage_multi30k_dropout() {
  local n
  for n in 1 2 3; do
    trial 0 rnnsearch_small "$n" "${DROPOUT_TRIALS[$n - 1]}" "$FIXED_RATE" &
    trial 1 lstm "$n" "${DROPOUT_TRIALS[$n - 1]}" "$FIXED_RATE" &
    wait_jobs
  done
}
stage_multi30k_rate() {  # trials 4-6: each model's better dropout of trials 1-3 with RATE_TRIALS
  local n chosen search_dropout lstm_dropout
  chosen=$(best rnnsearch_small 3)
  search_dropout=$(cat "$chosen/dropout.txt")
  chosen=$(best lstm 3)
  lstm_dropout=$(cat "$chosen/dropout.txt")
  for n in 4 5 6; do
    trial 0 rnnsearch_small "$n" "$search_dropout" "${RATE_TRIALS[$n - 4]}" &
    trial 1 lstm "$n" "$lstm_dropout" "${RATE_TRIALS[$n - 4]}" &
    wait_jobs
  done
}
stage_multi30k_seeds() {  # MODEL.seed1 = MODEL's best of the six trials, then seeds 2 and 3
  local n model chosen
  for model in rnnsearch_small lstm; do
    chosen=$(best "$model" 6)
    ln -sfn "$(basename "$chosen")" "$WORK/checkpoints/multi30k/$model.seed1"
  done
  for n in 2 3; do
    seed 0 rnnsearch_small "$n" &
    seed 1 lstm "$n" &
    wait_jobs
  done
}
# RNNencdec with RNNsearch's chosen options (there is no dropout on its single context vector:
# --encoder-dropout-out is RNNsearch's annotations), and RNNsearch's chosen model options trained
# with B.2's recipe instead of Adam
stage_multi30k_pair() {
  local chosen=$WORK/checkpoints/multi30k/rnnsearch_small.seed1 dropout encdec_dropout rate
  [[ -e "$chosen" ]] || { echo "reproduce_results.sh: error: no $chosen: run the multi30k-seeds stage first" >&2; exit 1; }
  dropout=$(cat "$chosen/dropout.txt")
  encdec_dropout=$(sed -E 's/--encoder-dropout-out [0-9.]+ ?//' "$chosen/dropout.txt")
  rate=$(cat "$chosen/rate.txt")
  # shellcheck disable=SC2086
  train 0 multi30k rnnencdec_small "$MINUTES" --arch rnnencdec_small $encdec_dropout $rate &
  # shellcheck disable=SC2086
  train 1 multi30k rnnsearch_small.b2 "$MINUTES" --arch rnnsearch_small "${PAPER_RECIPE[@]}" $dropout &
  wait_jobs
}
stage_multi30k_evaluate() {
  local systems=(rnnsearch_small.seed{1,2,3} lstm.seed{1,2,3} rnnencdec_small rnnsearch_small.b2)
  evaluate 0 multi30k test "${systems[@]}" &
  evaluate 1 multi30k test1 "${systems[@]}" &
  wait_jobs
}
# The quickstart's recipe (scripts/quickstart.sh), its updates too, in each direction of Multi30k, one core each
stage_multi30k_directions() {
  local updates
  updates=optimization.max_update=$(python scripts/recipe.py "$RECIPE" --get optimization.max_update)
  [[ -e "$WORK/multi30k/bin" ]] || python scripts/prepare_data.py multi30k --scheme spm --out "$WORK/multi30k"
  python scripts/prepare_data.py multi30k -s fr -t en --scheme spm --out "$WORK/multi30k.fr-en"
  train 0 multi30k quickstart "$DIRECTION_MINUTES" "$updates" &
  train 1 multi30k.fr-en quickstart "$DIRECTION_MINUTES" "$updates" &
  wait_jobs
  local core=0 corpus split
  for corpus in multi30k multi30k.fr-en; do
    for split in test test1; do
      REPORT=directions.$corpus evaluate "$core" "$corpus" "$split" quickstart &
    done
    core=1
  done
  wait_jobs
}
# RNNsearch-50 Fr->En, trained and evaluated as the hansards stages do En->Fr; one core
stage_hansards_fr_en() {
  python scripts/prepare_data.py hansards -s fr -t en "${HANSARDS_DATA[@]}" --out "$WORK/hansards.fr-en"
  train 1 hansards.fr-en rnnsearch_small "$HANSARDS_MINUTES" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}"
  evaluate 1 hansards.fr-en test rnnsearch_small
  heatmaps 1 hansards.fr-en rnnsearch_small
}
# The model as an aligner, beside statistical ones: eflomal, then fast_align's model
# (tooling/statistical_alignments.py --aligner) align every Hansards training pair the models train
# on with the alignment gold's 37, both directions, on core 1, and rnnsearch-aer scores each
# direction and symmetrisation; on core 0
# rnnsearch-aer scores each RNNsearch direction (argmax, threshold) and both symmetrised, and
# tooling/align_load.py times rnnsearch-align on the 3,000 test pairs, both directions.
# Everything goes to WORK/report/hansards.align, wall times to WORK/wall_times.tsv.
stage_hansards_align() {
  local out=$WORK/report/hansards.align name aligner
  {
    for aligner in eflomal fast_align; do
      on_core 1 python tooling/statistical_alignments.py --aligner "$aligner" --prepared "$WORK/hansards" --gold "$GOLD" \
        --out "$out/$aligner"
      for name in forward reverse intersect union grow-diag-final-and; do
        on_core 1 rnnsearch-aer --alignments "$out/$aligner/$aligner.$name" --name "$aligner $name" --gold "$GOLD" \
          --out "$out/$aligner.$name"
      done
    done
  } &
  {
    on_core 0 rnnsearch-aer --path "$(checkpoint hansards rnnsearch_small)" --data "$WORK/hansards/bin" \
      --reverse-path "$(checkpoint hansards.fr-en rnnsearch_small)" --reverse-data "$WORK/hansards.fr-en/bin" \
      --gold "$GOLD" --threshold "${THRESHOLDS[@]}" --out "$out/rnnsearch.en-fr"
    on_core 0 rnnsearch-aer --path "$(checkpoint hansards.fr-en rnnsearch_small)" --data "$WORK/hansards.fr-en/bin" \
      --gold "$GOLD" --threshold "${THRESHOLDS[@]}" --out "$out/rnnsearch.fr-en"
    on_core 0 python tooling/align_load.py --path "$(checkpoint hansards rnnsearch_small)" --data "$WORK/hansards/bin" \
      --reverse-path "$(checkpoint hansards.fr-en rnnsearch_small)" --reverse-data "$WORK/hansards.fr-en/bin" \
      --source "$WORK/hansards/word/test.en" --target "$WORK/hansards/word/test.fr" --sizes 3000 --out "$out" --name align_load.test
  } &
  wait_jobs
}
# Guided alignment (not the paper's): eflomal's grow-diag-final-and links of every training pair
# binarised beside them, and RNNsearch-50 En->Fr trained toward them on core 1, the hansards stage's
# options and budget and --alignment-lambda GUIDED_LAMBDA (default 2, fixed before training: at
# 0.5 the guidance was a fifth of the loss at the end, 0.5 x 1.53 bits a target token beside the
# translation's 3.06, and took the attention's cross-entropy with the links only from the unguided
# model's 1.29 nats to 1.15; 2 weighs the two terms equally), beside the unguided model on core 0
# (trained here unless the hansards stage has finished it), then on core 0 RNNsearch-50 with a
# full-context alignment head trained jointly from the start toward the same links
# (rnnsearch_small.head_joint: --alignment-lambda 1 on the head, the attention left free), the
# hansards-head stage's heads trained alone on a finished model beside it; all three evaluated in one
# report (WORK/report/hansards.guided.test), the guided model's links scored as hansards-align scores
# the unguided one's, the joint head's as hansards-head scores the heads (WORK/report/hansards.head)
# training_links CORE CORPUS: eflomal's grow-diag-final-and links of every training pair of the prepared
# Hansards WORK/CORPUS (either direction), binarised beside them
training_links() {
  local langs links
  read -ra langs <<< "$(pair "$2")"
  links=$WORK/$2/train.links.${langs[0]}-${langs[1]}
  [[ -s "$links" ]] || on_core "$1" python tooling/statistical_alignments.py --prepared "$WORK/$2" --training-alignments "$links"
  python scripts/prepare_data.py hansards -s "${langs[0]}" -t "${langs[1]}" "${HANSARDS_DATA[@]}" --out "$WORK/$2" \
    --train-alignments "$links"
}
stage_hansards_guided() {
  training_links 1 hansards
  {
    train 0 hansards rnnsearch_small "$HANSARDS_MINUTES" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}"
    train 0 hansards rnnsearch_small.head_joint "$HANSARDS_MINUTES" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}" \
      --alignment-head --alignment-head-context full --load-alignments --alignment-lambda 1
  } &
  train 1 hansards rnnsearch_small_guided "$HANSARDS_MINUTES" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}" \
    --load-alignments --alignment-lambda "${GUIDED_LAMBDA:-2}" &
  wait_jobs
  REPORT=hansards.guided evaluate 0 hansards test rnnsearch_small rnnsearch_small_guided rnnsearch_small.head_joint &
  head_aer 1 hansards rnnsearch_small.head_joint rnnsearch_small.head_joint
  on_core 1 rnnsearch-aer --path "$(checkpoint hansards rnnsearch_small_guided)" --data "$WORK/hansards/bin" \
    --reverse-path "$(checkpoint hansards.fr-en rnnsearch_small)" --reverse-data "$WORK/hansards.fr-en/bin" \
    --gold "$GOLD" --threshold "${THRESHOLDS[@]}" --out "$WORK/report/hansards.align/rnnsearch.guided.en-fr" &
  wait_jobs
}
# head CORE CORPUS NAME OPTIONS...: an alignment head on RNNsearch-50 of WORK/CORPUS (the hansards or
# hansards-fr-en stage's), trained alone for HEAD_MINUTES with the hansards options and OPTIONS (its
# objective), as WORK/checkpoints/CORPUS/NAME; unvalidated (the dev loss is the translation's, which the
# head leaves as it is), its checkpoint_best.pt the last. fairseq's --finetune-from-model carries the
# model's own training time into the new run, which --stop-time-hours counts: the head's budget is given
# on top of the model's.
head() {
  local core=$1 corpus=$2 name=$3 minutes; shift 3
  minutes=$(python -c 'import sys; from pathlib import Path; from rnnsearch_plugin.analysis.training_log import read_training_log
print(read_training_log(Path(sys.argv[1]))["wall_hours"] * 60 + float(sys.argv[2]))' "$WORK/checkpoints/$corpus/rnnsearch_small/train.log" "$HEAD_MINUTES")
  train "$core" "$corpus" "$name" "$minutes" --arch rnnsearch_small "${HANSARDS_OPTIONS[@]}" \
    --finetune-from-model "$(checkpoint "$corpus" rnnsearch_small)" --alignment-head --train-alignment-head-only \
    --disable-validation "$@"
  ln -sfn checkpoint_last.pt "$WORK/checkpoints/$corpus/$name/checkpoint_best.pt"
}
# head_aer CORE CORPUS NAME REPORT [OPTIONS...]: the links of WORK/checkpoints/CORPUS/NAME on the gold (argmax,
# thresholds; OPTIONS: a reverse model's, symmetrised), into WORK/report/hansards.head/REPORT
head_aer() {
  on_core "$1" rnnsearch-aer --path "$(checkpoint "$2" "$3")" --data "$WORK/$2/bin" --gold "$GOLD" \
    --threshold "${THRESHOLDS[@]}" --out "$WORK/report/hansards.head/$4" "${@:5}"
}
# The alignment head (not the paper's): heads on the unguided RNNsearch-50 En->Fr, its translation
# frozen (so that it translates as before: tests/models/test_alignment_head.py), trained one after another
# on core 0 (two side by side outgrow 24 GB: docs/training.md, the head's cost): toward eflomal's links
# (--alignment-lambda 1), by the head's own objective (--alignment-likelihood-lambda 1), toward the links
# with full context, then the same full-context head on RNNsearch-50 Fr->En (toward the Fr->En pairs'
# links) and the two full-context heads' links symmetrised, and last toward the links for three times as
# long (does more training close the gap to eflomal?); each one's links scored as it ends, after both
# directions' training links (eflomal, one core each). On core 1 meanwhile: the model's own attention
# scored, rnnsearch-align timed on the test pairs (one direction) with the model's attention and, once
# trained, with the first head, and the model evaluated with and without that head (BLEU: the same
# translations)
stage_hansards_head() {
  local out=$WORK/report/hansards.head name heads full=(--alignment-head-context full --load-alignments --alignment-lambda 1)
  training_links 0 hansards &
  training_links 1 hansards.fr-en &
  wait_jobs
  {
    head 0 hansards rnnsearch_small.head_links --load-alignments --alignment-lambda 1
    head_aer 0 hansards rnnsearch_small.head_links rnnsearch_small.head_links
    head 0 hansards rnnsearch_small.head_own --alignment-likelihood-lambda 1
    head_aer 0 hansards rnnsearch_small.head_own rnnsearch_small.head_own
    head 0 hansards rnnsearch_small.head_links_full "${full[@]}"
    head_aer 0 hansards rnnsearch_small.head_links_full rnnsearch_small.head_links_full
    head 0 hansards.fr-en rnnsearch_small.head_links_full "${full[@]}"
    head_aer 0 hansards.fr-en rnnsearch_small.head_links_full rnnsearch_small.head_links_full.fr-en
    head_aer 0 hansards rnnsearch_small.head_links_full rnnsearch_small.head_links_full.both \
      --reverse-path "$(checkpoint hansards.fr-en rnnsearch_small.head_links_full)" --reverse-data "$WORK/hansards.fr-en/bin"
    HEAD_MINUTES=$((HEAD_MINUTES * 3)) head 0 hansards rnnsearch_small.head_links_long --load-alignments --alignment-lambda 1
    head_aer 0 hansards rnnsearch_small.head_links_long rnnsearch_small.head_links_long
  } &
  heads=$!
  {
    on_core 1 rnnsearch-aer --path "$(checkpoint hansards rnnsearch_small)" --data "$WORK/hansards/bin" --gold "$GOLD" \
      --threshold "${THRESHOLDS[@]}" --out "$out/rnnsearch_small"
    until [[ -e "$(checkpoint hansards rnnsearch_small.head_links)" ]]; do
      kill -0 "$heads" 2>/dev/null || exit 1  # the heads' job failed before the first head was trained
      sleep 60
    done
    for name in rnnsearch_small rnnsearch_small.head_links; do
      on_core 1 python tooling/align_load.py --path "$(checkpoint hansards "$name")" --data "$WORK/hansards/bin" \
        --source "$WORK/hansards/word/test.en" --target "$WORK/hansards/word/test.fr" --sizes 3000 --out "$out" --name "align_load.$name"
    done
    REPORT=hansards.head evaluate 1 hansards test rnnsearch_small rnnsearch_small.head_links
  } &
  wait_jobs
}
stage_publish() {
  python tooling/publish_results.py --work "$WORK" --out "$RESULTS"
}

# machine STAGE: the processor a stage ran on, and the instruction sets that matter for its speed
machine() {
  printf '%s\t%s\n' "$1" "$(python tooling/machine.py)" >> "$WORK/machines.tsv"
}

mkdir -p "$WORK"
for stage in "${@:-${STAGES[@]}}"; do
  log "stage $stage"
  machine "$stage"
  "stage_${stage//-/_}"
done
