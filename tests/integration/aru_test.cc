// Atomic recovery units over NBD (docs/aru.md), in every mode,
// through the real plugin: a connection to export "aru" has an ARU whose
// writes only it sees until its flush commits them; closing without a
// flush, or a kill -9 before the flush returns, aborts it; aru_max= bounds
// it; the default export is unchanged; ordinary clients (nbdsh, nbdcopy)
// can use it.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr uint64_t kBlk = 4096;

NbdHandle connect_export(const NbdkitServer& server, const char* name) {
  NbdHandle h(nbd_create());
  check_nbd(nbd_set_export_name(h.get(), name), "nbd_set_export_name");
  check_nbd(nbd_connect_unix(h.get(), server.socket().c_str()), "nbd_connect_unix");
  return h;
}

class Aru : public ::testing::TestWithParam<const char*> {
 protected:
  std::vector<std::string> params(std::vector<std::string> extra = {}) const {
    std::vector<std::string> p = {"file=" + dir_.file("disk.img"), "size=16M", "latency=none",
                                  "statsfile=" + dir_.file("stats.json")};
    for (auto& e : extra) p.push_back(e);
    return with_mode(p, GetParam());
  }
  TempDir dir_;
};

TEST_P(Aru, OnlyItsConnectionSeesItUntilTheFlushCommitsIt) {
  NbdkitServer server(dir_, params());
  NbdHandle aru = connect_export(server, "aru");
  NbdHandle other = server.connect();
  EXPECT_EQ(nbd_can_multi_conn(aru.get()), 0);
  EXPECT_EQ(nbd_can_multi_conn(other.get()), 1);
  const auto a = pattern_bytes(0, 3 * kBlk, 1), b = pattern_bytes(100 * kBlk + 512, 1024, 1);
  write_bytes(aru.get(), 0, a, LIBNBD_CMD_FLAG_FUA);  // FUA does not commit early
  write_bytes(aru.get(), 100 * kBlk + 512, b);
  check_nbd(nbd_trim(aru.get(), kBlk, kBlk, 0), "nbd_trim");  // inside the ARU: block 1 zeros
  std::vector<uint8_t> want = a;
  std::fill(want.begin() + kBlk, want.begin() + 2 * kBlk, 0);
  EXPECT_EQ(first_difference(read_bytes(aru.get(), 0, 3 * kBlk), want), "");
  EXPECT_EQ(first_difference(read_bytes(aru.get(), 100 * kBlk + 512, 1024), b), "");
  EXPECT_EQ(first_difference(read_bytes(other.get(), 0, 3 * kBlk),
                             std::vector<uint8_t>(3 * kBlk, 0)),
            "")
      << "another connection saw an uncommitted ARU";
  check_nbd(nbd_flush(aru.get(), 0), "nbd_flush (commit)");
  EXPECT_EQ(first_difference(read_bytes(other.get(), 0, 3 * kBlk), want), "");
  EXPECT_EQ(first_difference(read_bytes(other.get(), 100 * kBlk + 512, 1024), b), "");

  // The next ARU on the same connection, dropped by closing it.
  write_bytes(aru.get(), 50 * kBlk, pattern_bytes(50 * kBlk, kBlk, 2));
  nbd_shutdown(aru.get(), 0);
  aru.reset();
  EXPECT_EQ(first_difference(read_bytes(other.get(), 50 * kBlk, kBlk),
                             std::vector<uint8_t>(kBlk, 0)),
            "")
      << "an aborted ARU's write became visible";
  nbd_shutdown(other.get(), 0);
  // The ARU connection's close (which counts the abort) runs after its
  // disconnect returned; stopping at once could beat it (the stats file is
  // rewritten every second).
  EXPECT_TRUE(NbdkitServer::eventually(
      [&] { return read_json(dir_.file("stats.json")).at("aru").at("aborts").get<int>() == 1; },
      std::chrono::seconds(10)));
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  nlohmann::json j = read_json(dir_.file("stats.json"));
  SCOPED_TRACE(j.dump(2));
  EXPECT_EQ(j.at("aru").at("commits").get<int>(), 1);
  EXPECT_EQ(j.at("aru").at("blocks_committed").get<int>(), 4);  // blocks 0, 1, 2, 100
  EXPECT_EQ(j.at("aru").at("aborts").get<int>(), 1);
  EXPECT_EQ(j.at("aru").at("shadow_requests").get<int>(), 4);
  EXPECT_EQ(j.at("requests").at("write").get<int>(), 0) << "ARU writes are not disk writes";
}

TEST_P(Aru, AKillBeforeTheFlushAbortsAndACommittedArUSurvives) {
  const auto committed = pattern_bytes(0, 64 * kBlk, 3);
  const auto pending = pattern_bytes(64 * kBlk, 64 * kBlk, 4);
  {
    NbdkitServer server(dir_, params());
    NbdHandle aru = connect_export(server, "aru:kill");
    write_bytes(aru.get(), 0, committed);
    check_nbd(nbd_flush(aru.get(), 0), "nbd_flush (commit)");
    write_bytes(aru.get(), 64 * kBlk, pending);
    write_bytes(aru.get(), 0, pattern_bytes(0, kBlk, 5));  // over the committed ARU
    server.kill9();
  }
  NbdkitServer server(dir_, params());
  NbdHandle h = server.connect();
  EXPECT_EQ(first_difference(read_bytes(h.get(), 0, 64 * kBlk), committed), "");
  EXPECT_EQ(first_difference(read_bytes(h.get(), 64 * kBlk, 64 * kBlk),
                             std::vector<uint8_t>(64 * kBlk, 0), 64 * kBlk),
            "")
      << "an ARU without a commit survived the kill";
  nbd_shutdown(h.get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST_P(Aru, TwoArusCommitInTheOrderOfTheirFlushes) {
  NbdkitServer server(dir_, params());
  NbdHandle first = connect_export(server, "aru:first");
  NbdHandle second = connect_export(server, "aru:second");
  write_bytes(first.get(), 0, pattern_bytes(0, 2 * kBlk, 6));
  write_bytes(second.get(), kBlk, pattern_bytes(kBlk, 2 * kBlk, 7));
  check_nbd(nbd_flush(second.get(), 0), "nbd_flush second");
  check_nbd(nbd_flush(first.get(), 0), "nbd_flush first");  // last committer wins block 1
  NbdHandle h = server.connect();
  std::vector<uint8_t> want = pattern_bytes(0, 2 * kBlk, 6);
  const auto tail = pattern_bytes(2 * kBlk, kBlk, 7);
  want.insert(want.end(), tail.begin(), tail.end());
  EXPECT_EQ(first_difference(read_bytes(h.get(), 0, 3 * kBlk), want), "");
  for (NbdHandle* c : {&first, &second, &h}) nbd_shutdown(c->get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST_P(Aru, AruMaxRefusesMoreWithENOSPCAndKeepsTheAruIntact) {
  NbdkitServer server(dir_, params({"aru_max=64K"}));
  NbdHandle aru = connect_export(server, "aru");
  const auto full = pattern_bytes(0, 16 * kBlk, 8);
  write_bytes(aru.get(), 0, full);
  write_bytes(aru.get(), 0, pattern_bytes(0, kBlk, 8));  // a block it holds: no more room needed
  const auto more = pattern_bytes(16 * kBlk, kBlk, 8);
  EXPECT_EQ(nbd_pwrite(aru.get(), more.data(), more.size(), 16 * kBlk, 0), -1);
  EXPECT_EQ(nbd_get_errno(), ENOSPC);
  EXPECT_EQ(first_difference(read_bytes(aru.get(), 0, 16 * kBlk), full), "");
  check_nbd(nbd_flush(aru.get(), 0), "nbd_flush (commit)");
  NbdHandle h = server.connect();
  EXPECT_EQ(first_difference(read_bytes(h.get(), 0, 16 * kBlk), full), "");
  for (NbdHandle* c : {&aru, &h}) nbd_shutdown(c->get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  EXPECT_NE(server.stderr_text().find("more than aru_max=65536"), std::string::npos)
      << server.stderr_text();
}

// nbdsh (its python3 must be Debian's: PATH) and nbdcopy know nothing of
// ARUs: an export name and a flush are all they need. nbdcopy --flush
// flushes once at the end, so the whole copy is one ARU (without --flush it
// never flushes, and the copy is aborted).
TEST_P(Aru, OrdinaryClientsUseIt) {
  NbdkitServer server(dir_, params());
  const std::string uri = "nbd+unix:///aru?socket=" + server.socket();
  const std::string nbdsh = "PATH=/usr/bin:$PATH nbdsh -u '" + uri +
                            "' -c 'h.pwrite(b\"\\x5a\" * 8192, 4096); h.flush()'";
  ASSERT_EQ(std::system(nbdsh.c_str()), 0) << nbdsh;
  const std::string src = dir_.file("src.bin");
  {
    std::vector<uint8_t> data = pattern_bytes(0, 1 << 20, 9);
    FILE* f = std::fopen(src.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(data.data(), 1, data.size(), f), data.size());
    std::fclose(f);
  }
  const std::string copy = "nbdcopy --flush --destination-is-zero " + src + " '" + uri + "'";
  ASSERT_EQ(std::system(copy.c_str()), 0) << copy;
  NbdHandle h = server.connect();
  EXPECT_EQ(first_difference(read_bytes(h.get(), 0, 1 << 20), pattern_bytes(0, 1 << 20, 9)), "");
  nbd_shutdown(h.get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  nlohmann::json j = read_json(dir_.file("stats.json"));
  EXPECT_EQ(j.at("aru").at("commits").get<int>(), 2) << j.dump(2);
  EXPECT_EQ(j.at("aru").at("aborts").get<int>(), 0) << j.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Modes, Aru, ::testing::ValuesIn(kAllModes), ModeName);

// A server started read-only (-r) lists no aru export and refuses one.
TEST(AruReadOnly, IsRefusedWithAMessage) {
  TempDir dir;
  const std::string file = dir.file("disk.img");
  {
    NbdkitServer server(dir, {"file=" + file, "size=4M", "latency=none"});
    ASSERT_EQ(server.stop(), 0);
  }
  NbdkitServer server(dir, {"file=" + file}, {"-r"});
  NbdHandle h(nbd_create());
  check_nbd(nbd_set_export_name(h.get(), "aru"), "nbd_set_export_name");
  EXPECT_EQ(nbd_connect_unix(h.get(), server.socket().c_str()), -1);
  ASSERT_EQ(server.stop(), 0);
  // The reason is the server's to fix, and said so: no advice to the client.
  EXPECT_NE(server.stderr_text().find("export aru is not served: an atomic recovery unit commits "
                                      "writes and this server serves the disk read-only (nbdkit "
                                      "-r"),
            std::string::npos)
      << server.stderr_text();
  EXPECT_EQ(server.stderr_text().find("connect without"), std::string::npos)
      << server.stderr_text();
}

// A name that looks meant for an ARU but is not one is refused: served as
// the plain disk, its client would lose the atomicity it asked for without
// a word. Other names are the plain disk, as "" is.
TEST(AruExportName, LookAlikesAreRefusedOtherNamesAreTheDisk) {
  TempDir dir;
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=4M", "latency=none"});
  // -1: refused; else what the export advertises as multi-conn (the plain
  // disk 1, an ARU 0).
  auto multi_conn = [&](const char* name) {
    NbdHandle h(nbd_create());
    check_nbd(nbd_set_export_name(h.get(), name), "nbd_set_export_name");
    if (nbd_connect_unix(h.get(), server.socket().c_str()) == -1) return -1;
    const int mc = nbd_can_multi_conn(h.get());
    nbd_shutdown(h.get(), 0);
    return mc;
  };
  for (const char* name : {"ARU", "aru2", "Aru:x", "aRu"}) EXPECT_EQ(multi_conn(name), -1) << name;
  for (const char* name : {"", "disk", "ar", "a-r-u"}) EXPECT_EQ(multi_conn(name), 1) << name;
  for (const char* name : {"aru", "aru:x"}) EXPECT_EQ(multi_conn(name), 0) << name;
  ASSERT_EQ(server.stop(), 0);
  EXPECT_NE(server.stderr_text().find("export ARU: no such export"), std::string::npos)
      << server.stderr_text();
}

}  // namespace
}  // namespace vld::test
