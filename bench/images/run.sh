#!/usr/bin/env bash
# The image svc builds for examples/hello beside what its peers build for the same service,
# in one run on one engine: svc at BEFORE_REF (a commit to compare with, optional) and this
# checkout, a plain python:3.11-slim + pip + FastAPI/uvicorn image (bench/images/fastapi),
# and BentoML's `bentoml containerize` (bench/images/bento). Prints a Markdown table.
#
#   npm run build && bash bench/images/run.sh [BEFORE_REF]
#
# Every image builds FROM the same local python:3.11-slim-bookworm (scripts/ci/base-image-standins.sh
# makes it where no registry is reachable), so the base is the same 292 MB for all.
# BENTO_VENV: a virtualenv with bentoml (default .venv-bento at the repo root, made with
# `python3 -m venv .venv-bento && .venv-bento/bin/pip install bentoml`); without it the
# BentoML row is left out. TAG_PREFIX names the images (default svc-bench-images).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
before_ref=${1:-}
prefix=${TAG_PREFIX:-svc-bench-images}
bento_venv=${BENTO_VENV:-$repo/.venv-bento}
work=$(mktemp -d /tmp/svc-bench-images.XXXXXX)
cleanup() {
  if [[ -n "$before_ref" ]]; then git -C "$repo" worktree remove --force "$work/svc-before" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

bash "$repo/scripts/ci/base-image-standins.sh" >&2

# examples/hello at Python 3.11, the stand-in's, built by the svc checkout in $1.
svc_image() {
  local name=$1 svc_root=$2 project="$work/hello-$1"
  shift 2
  cp -r "$repo/examples/hello" "$project"
  echo 3.11 >"$project/.python-version"
  echo "building $prefix-$name:bench" >&2
  node "$svc_root/bin/svc.js" build "$project" --image "$prefix-$name:bench" "$@" >"$work/$name.log" 2>&1 || { tail -n 40 "$work/$name.log" >&2; exit 1; }
}

rows=()
if [[ -n "$before_ref" ]]; then
  git -C "$repo" worktree add --detach "$work/svc-before" "$before_ref" >/dev/null 2>&1
  ln -s "$repo/node_modules" "$work/svc-before/node_modules"
  (cd "$work/svc-before" && node scripts/bundle.js >/dev/null)
  svc_image svc-before "$work/svc-before"
  rows+=("svc-before|svc build --image at $(git -C "$repo" rev-parse --short "$before_ref")")
fi
here="$(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD -- src templates || echo ' + uncommitted changes')"
svc_image svc "$repo"
rows+=("svc|svc build --image at $here")
svc_image svc-ffmpeg "$repo" --ffmpeg
rows+=("svc-ffmpeg|svc build --image --ffmpeg at $here")
svc_image svc-tools "$repo" --ffmpeg --compilers
rows+=("svc-tools|svc build --image --ffmpeg --compilers at $here")

echo "building $prefix-fastapi:bench" >&2
docker build -q -t "$prefix-fastapi:bench" "$repo/bench/images/fastapi" >/dev/null
rows+=("fastapi|python:3.11-slim-bookworm + pip install fastapi uvicorn (bench/images/fastapi/Dockerfile)")

if [[ -x "$bento_venv/bin/bentoml" ]]; then
  echo "building $prefix-bento:bench" >&2
  export BENTOML_HOME="$work/bentoml"
  "$bento_venv/bin/bentoml" build "$repo/bench/images/bento" >"$work/bento-build.log" 2>&1 || { tail -n 40 "$work/bento-build.log" >&2; exit 1; }
  # bentoml asks for BuildKit, which the docker CLI runs only through buildx; where buildx
  # is missing the classic builder builds the same Dockerfile (it uses no BuildKit syntax).
  buildkit=1
  docker buildx version >/dev/null 2>&1 || buildkit=0
  DOCKER_BUILDKIT=$buildkit "$bento_venv/bin/bentoml" containerize hello:latest -t "$prefix-bento:bench" >"$work/bento.log" 2>&1 || { tail -n 40 "$work/bento.log" >&2; exit 1; }
  rows+=("bento|bentoml $("$bento_venv/bin/bentoml" --version | awk '{print $NF}') build + containerize (bench/images/bento)")
fi

# MB of the layers whose instruction matches a pattern, from `docker history` (bytes, unrounded).
layer_mb() {
  docker image inspect "$1" >/dev/null
  docker history --no-trunc --human=false --format '{{.Size}}\t{{.CreatedBy}}' "$1" |
    awk -F '\t' -v pattern="$2" '$2 ~ pattern { sum += $1 } END { printf "%.0f", sum / 1e6 }'
}

base_mb=$(docker image inspect --format '{{.Size}}' python:3.11-slim-bookworm | awk '{ printf "%.0f", $1 / 1e6 }')
echo "| image | size | apt layer | Python packages | rest over the base | what it is |"
echo "|---|---:|---:|---:|---:|---|"
for row in "${rows[@]}"; do
  name=${row%%|*}
  what=${row#*|}
  image="$prefix-$name:bench"
  total=$(docker image inspect --format '{{.Size}}' "$image" | awk '{ printf "%.0f", $1 / 1e6 }')
  apt=$(layer_mb "$image" 'apt-get')
  python=$(layer_mb "$image" 'pip install|uv pip install|uv venv|COPY --from=build /opt/(venv|python)|install uv|uv-requirements')
  rest=$((total - base_mb - apt - python))
  echo "| \`$image\` | $total MB | $apt MB | $python MB | $rest MB | $what |"
done
echo
echo "Base image (in every size above): python:3.11-slim-bookworm, $base_mb MB."
