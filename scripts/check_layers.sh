#!/usr/bin/env bash
# Checks the layering rules of DESIGN.md 2 that the compiler cannot see, on the source tree:
#   1. the harness (src/harness) includes no runtime: only pipette/runtime.h (no runtimes/...
#      header at all), and links no runtime library;
#   2. public headers (include/pipette) include only public headers (and system/library ones);
#   3. the harness and the runtimes (src/harness, src/runtimes) never see which transport reaches
#      the device (DESIGN.md 8a): no transport implementation header, no TransportKind, no
#      ssh or adb by name; they use platform/transport.h's interface and DeviceAccess only;
#   4. the scorers (src/scorers) are pure: they include only pipette/, base/ and their own headers
#      (their tests may read the shared corpus through tests/support)
#      and link only pipette_base (and GiNaC, the external Debian library of MATH's symbolic
#      equivalence; ICU, the one of IFBench's Unicode properties, case mapping and NFKD).
# Prints each violation as FILE:LINE: what, and exits 1 if there is one. Run by ctest
# (LayerCheck) and usable alone: scripts/check_layers.sh [REPO_ROOT]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
bad=0

while IFS= read -r hit; do
  echo "$hit: the harness includes a concrete runtime (use pipette/runtime.h)"
  bad=1
done < <(grep -nE '#include "runtimes/' src/harness/*.h src/harness/*.cc || true)

if grep -nE 'pipette_runtime_(llamacpp|openai|stock)|pipette_runtimes\b|pipette_llama_bench|pipette_openai_client' \
     src/harness/CMakeLists.txt src/harness/*.cmake 2>/dev/null; then
  echo "src/harness/CMakeLists.txt: the harness links a concrete runtime library"
  bad=1
fi

while IFS= read -r hit; do
  echo "$hit: a public header includes an internal one (public headers include only pipette/*.h)"
  bad=1
done < <(grep -nE '#include "' include/pipette/*.h | grep -vE '#include "pipette/' || true)

while IFS= read -r hit; do
  echo "$hit: the harness or a runtime names a transport (use the Transport interface; DESIGN.md 8a)"
  bad=1
done < <(grep -rnE 'transport_impl\.h|TransportKind::|Make(Ssh|Adb|Local)Transport|"(ssh|adb)(://)?"' \
           src/harness src/runtimes --include='*.h' --include='*.cc' | grep -v '_test\.cc:' || true)

while IFS= read -r hit; do
  echo "$hit: a scorer includes a header outside src/base (scorers depend on nothing else)"
  bad=1
done < <(grep -rnE '#include "' src/scorers --include='*.h' --include='*.cc' | grep -v '_test\.cc:' |
           grep -vE '#include "(pipette/scorers.h|pipette/status.h|base/|scorers/)' || true)
scorers_links='target_link_libraries\(pipette_scorers PUBLIC pipette_base( PRIVATE PkgConfig::GINAC( ICU::uc ICU::data)?)?\)$'
if grep -nE 'target_link_libraries\(pipette_scorers' src/scorers/CMakeLists.txt |
     grep -vqE "$scorers_links"; then
  echo "src/scorers/CMakeLists.txt: pipette_scorers links more than pipette_base (and GiNaC, ICU)"
  bad=1
fi

if [ "$bad" -eq 0 ]; then
  echo "layers: ok (harness: $(ls src/harness/*.cc src/harness/*.h | wc -l) files, no concrete runtime; public headers: $(ls include/pipette/*.h | wc -l), public only)"
fi
exit "$bad"
