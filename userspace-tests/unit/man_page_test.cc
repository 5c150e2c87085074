// o2ctl/o2ctl.8 documents every command of o2ctl's table and every name
// o2ctl accepts.
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "o2ctl/cli.h"
#include "o2lnd/counters.h"
#include "o2lnd/names.h"

#ifndef O2CTL_MAN_PAGE
#error "O2CTL_MAN_PAGE must name o2ctl/o2ctl.8"
#endif

namespace o2ctl {
namespace {

std::string man_page() {
  std::ifstream f(O2CTL_MAN_PAGE);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The man page's text with roff's "\-" as "-".
std::string plain(std::string text) {
  for (std::size_t at = text.find("\\-"); at != std::string::npos; at = text.find("\\-", at)) {
    text.replace(at, 2, "-");
  }
  return text;
}

TEST(ManPage, DocumentsEveryCommandInItsOwnSection) {
  std::string page = plain(man_page());
  ASSERT_FALSE(page.empty()) << "cannot read " << O2CTL_MAN_PAGE;
  for (std::string_view name : command_names()) {
    EXPECT_NE(page.find("\n.SS \"" + std::string(name)), std::string::npos) << name;
    EXPECT_NE(page.find("\n.B o2ctl " + std::string(name)), std::string::npos)
        << name << " is not in the SYNOPSIS";
  }
}

TEST(ManPage, NamesEveryFaultKindEventReasonAndType) {
  std::string page = plain(man_page());
  for (auto kind :
       {o2lnd::NameKind::kFaultKind, o2lnd::NameKind::kCmEvent, o2lnd::NameKind::kRejectReason,
        o2lnd::NameKind::kMsgType, o2lnd::NameKind::kRtrPool}) {
    for (const auto& n : o2lnd::names(kind)) {
      EXPECT_NE(page.find(std::string(n.name)), std::string::npos) << n.name;
    }
  }
}

TEST(ManPage, DocumentsEveryOptionOfTheNewCommands) {
  std::string page = plain(man_page());
  for (const char* opt :
       {"--net",   "--verbose",     "--source",      "--peer",    "--local",  "--count",
        "--prob",  "--delay",       "--queue-depth", "--frags",   "--device", "--table",
        "--from",  "--concurrency", "--duration",    "--timeout", "--yaml",   "--size",
        "--check", "--seed",        "--ack"}) {
    EXPECT_NE(page.find(opt), std::string::npos) << opt;
  }
}

// Every key o2ctl prints for the fields of ABI 3, 4 and 5, and selftest's.
TEST(ManPage, DocumentsTheCreditAndHealthKeys) {
  std::string page = plain(man_page());
  for (const char* key :
       {"tx_timeouts", "queue_full_drops", "keepalives", "early_replies", "peercredits_hiw",
        "concurrent_sends", "ntx", "keepalive", "tx_credits:", "available", "tx_live",
        "tx credits max", "tx credits min", "credit queued", "health", "failures", "downs",
        "alive ms", "tx timeouts", "reserved credits", "concurrent sends", "sq size", "sq free",
        "noops posted", "noops queued", "idle ms", "comp vector", "comp vectors", "send count",
        "queue full drops", "early replies", "CRED", "HEALTH", "TXS", "RSV", "SENDS", "NOOPS",
        "IDLE_MS", "TMO", "QFULL", "EARLY", "rpc_per_s", "msg_per_s", "latency_us",
        "wall_latency_us", "duration_s", "expired", "dropped", "refused",
        // ABI 4: bulk transfers
        "rdma_bytes", "bulk_errors", "bulk:", "max_immediate", "max_frags", "cksum", "mr_pool:",
        "max_pages", "recovered", "MRS", "mib_per_s", "rdma_rpcs", "verify", "KiB", "MiB",
        // ABI 5: routing
        "router credits", "router credits max", "router credits min", "router queued", "RTR",
        "RMIN", "RQ", "route:", "gateway", "hop", "priority", "routing:", "forwarding",
        "peer buffer credits", "router timeout", "waiting max", "held rx", "forwarded bytes",
        "dropped no route", "dropped down", "dropped timeout", "dropped closed", "dropped error",
        "buffers:", "nbuffers", "min credits", "taken", "tiny", "small", "large", "GATEWAY", "PRIO",
        "FORWARDING", "PEER_CRED", "WAIT_MAX", "HELD_RX", "FWD_BYTES", "NO_ROUTE", "POOL",
        "TAKEN"}) {
    EXPECT_NE(page.find(key), std::string::npos) << key;
  }
}

// Every counter of the uapi lists (include/uapi/o2lnd_counters.h): a new
// counter is a list line and its man page words.
TEST(ManPage, DocumentsEveryCounterOfTheUapiLists) {
  std::string page = plain(man_page());
  auto check = [&](std::string_view list, const auto& counters) {
    for (const auto& c : counters) {
      EXPECT_NE(page.find(std::string(c.key)), std::string::npos)
          << list << ": " << c.name << " (key \"" << c.key << "\") is not in the man page";
    }
  };
  check("O2LND_NI_COUNTERS", o2lnd::kNiCounters);
  check("O2LND_PEER_COUNTERS", o2lnd::kPeerCounters);
  check("O2LND_CONN_COUNTERS", o2lnd::kConnCounters);
  check("O2LND_ROUTE_COUNTERS", o2lnd::kRouteCounters);
  check("O2LND_ROUTING_COUNTERS", o2lnd::kRoutingCounters);
}

}  // namespace
}  // namespace o2ctl
