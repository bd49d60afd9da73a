#include <signal.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "platform/interrupt.h"

namespace pipette {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<pid_t> g_target{0};

void OnSignal(int sig) {
  g_interrupted = true;
  const pid_t target = g_target.load();
  if (target > 0) kill(target, SIGKILL);  // works on a stopped or hung runtime too
  signal(sig, SIG_DFL);  // a second signal ends pipette
}

}  // namespace

void InstallInterruptHandler() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

bool Interrupted() { return g_interrupted.load(); }

bool SleepUnlessInterrupted(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (Interrupted()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !Interrupted();
}

void SetInterruptTarget(pid_t pid) { g_target = pid; }

}  // namespace pipette
