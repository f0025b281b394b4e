// The block-trace readers of tools/trace: every field of every request of
// a hand-written trace per format (tests/data/traces), detection, gzip
// input, and the one-line message of each kind of malformed line.
#include "tools/trace/trace_reader.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "tools/trace/arrival_order.h"

namespace vld {
namespace {

const std::string kData = VLD_TRACE_DATA_DIR;

std::vector<TraceRequest> read_all(TraceReader& r) {
  std::vector<TraceRequest> out;
  TraceRequest req;
  while (r.next(req)) out.push_back(req);
  return out;
}

std::vector<TraceRequest> read_all(const std::string& path, TraceFormat format,
                                   bool skip_bad = false) {
  auto r = open_trace(path, format, skip_bad);
  return read_all(*r);
}

// One request, every field.
struct Want {
  TraceOp op;
  uint64_t offset;
  uint64_t len;
  bool fua;
  bool preflush;
  std::optional<double> time_us;
  uint64_t line;
};

void expect_requests(const std::vector<TraceRequest>& got, const std::vector<Want>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(trace_op_name(got[i].op), std::string(trace_op_name(want[i].op)));
    EXPECT_EQ(got[i].offset_bytes, want[i].offset);
    EXPECT_EQ(got[i].len_bytes, want[i].len);
    EXPECT_EQ(got[i].fua, want[i].fua);
    EXPECT_EQ(got[i].preflush, want[i].preflush);
    ASSERT_EQ(got[i].time_us.has_value(), want[i].time_us.has_value());
    if (want[i].time_us) {
      EXPECT_NEAR(*got[i].time_us, *want[i].time_us, 1e-6);
    }
    EXPECT_EQ(got[i].line, want[i].line);
  }
}

// Files written by a test, in a directory of their own.
class TraceFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/vld-trace-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const auto& p : written_) unlink(p.c_str());
    rmdir(dir_.c_str());
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    written_.push_back(path);
    return path;
  }
  // The message of the Error that reading `text` as `format` throws.
  std::string error_of(const std::string& text, TraceFormat format,
                       const std::string& name = "t.trace") {
    std::string path = write(name, text);
    try {
      read_all(path, format);
    } catch (const Error& e) {
      EXPECT_EQ(e.err(), EINVAL);
      return e.what();
    }
    return "(no error)";
  }
  std::string dir_;
  std::vector<std::string> written_;
};

TEST(TraceNames, RoundTrip) {
  for (TraceFormat f : {TraceFormat::kAuto, TraceFormat::kFioV2, TraceFormat::kFioV3,
                        TraceFormat::kBlkparse, TraceFormat::kNbdkitLog, TraceFormat::kMsr}) {
    EXPECT_EQ(parse_trace_format(trace_format_name(f)), f);
  }
  EXPECT_EQ(std::string(trace_format_name(TraceFormat::kNbdkitLog)), "nbdkit-log");
  EXPECT_EQ(parse_trace_format("fio"), std::nullopt);
  EXPECT_EQ(std::string(trace_op_name(TraceOp::kZero)), "zero");
}

TEST(FioIolog, Version2EveryRequest) {
  auto r = open_trace(kData + "/fio_v2.iolog", TraceFormat::kAuto, false);
  EXPECT_EQ(r->format(), TraceFormat::kFioV2);
  EXPECT_TRUE(r->records_sync());
  expect_requests(read_all(*r), {
      {TraceOp::kWrite, 0, 4096, false, false, std::nullopt, 5},
      {TraceOp::kRead, 4096, 512, false, false, std::nullopt, 6},
      {TraceOp::kFlush, 0, 0, false, false, std::nullopt, 9},
      {TraceOp::kFlush, 0, 0, false, false, std::nullopt, 10},
      {TraceOp::kTrim, 1048576, 65536, false, false, std::nullopt, 11},
  });
  EXPECT_EQ(r->skipped_lines(), 0u);
}

TEST(FioIolog, Version3TimesFromTheFirstRequest) {
  auto r = open_trace(kData + "/fio_v3.iolog", TraceFormat::kAuto, false);
  EXPECT_EQ(r->format(), TraceFormat::kFioV3);
  expect_requests(read_all(*r), {
      {TraceOp::kWrite, 12288, 4096, false, false, 0.0, 5},
      {TraceOp::kWrite, 192512, 4096, false, false, 9964.0, 6},
      {TraceOp::kFlush, 0, 0, false, false, 29989.0, 7},
      {TraceOp::kRead, 0, 65536, false, false, 30072.0, 8},
      {TraceOp::kFlush, 0, 0, false, false, 39872.0, 9},
      {TraceOp::kTrim, 1048576, 1048576, false, false, 39872.0, 10},
  });
  EXPECT_EQ(r->position_bytes(), r->size_bytes());
}

TEST(Blkparse, CompletedRequestsInIssueOrder) {
  auto r = open_trace(kData + "/blkparse.txt", TraceFormat::kAuto, false);
  EXPECT_EQ(r->format(), TraceFormat::kBlkparse);
  EXPECT_TRUE(r->records_sync());
  expect_requests(read_all(*r), {
      {TraceOp::kWrite, 1052672ull * 512, 8 * 512, false, false, 0.0, 11},
      {TraceOp::kRead, 2048 * 512, 16 * 512, false, false, 10.0, 10},
      {TraceOp::kFlush, 0, 0, false, false, 190.0, 14},
      {TraceOp::kWrite, 4096 * 512, 8 * 512, true, true, 390.0, 17},
      {TraceOp::kTrim, 8192 * 512, 2048 * 512, false, false, 590.0, 19},
      {TraceOp::kRead, 300 * 512, 8 * 512, false, false, 890.0, 25},
  });
}

TEST(NbdkitLog, SuccessfulRequestsInCallOrder) {
  auto r = open_trace(kData + "/nbdkit.log", TraceFormat::kAuto, false);
  EXPECT_EQ(r->format(), TraceFormat::kNbdkitLog);
  EXPECT_TRUE(r->records_sync());
  expect_requests(read_all(*r), {
      {TraceOp::kWrite, 0, 0x1000, true, false, 0.0, 6},
      {TraceOp::kWrite, 0x1000, 0x200, false, false, 415.0, 9},
      {TraceOp::kRead, 0, 0x200, false, false, 444.0, 10},
      {TraceOp::kFlush, 0, 0, false, false, 474.0, 14},
      {TraceOp::kTrim, 0x2000, 0x1000, true, false, 474.0, 15},  // clamped from 472
      {TraceOp::kZero, 0x2000, 0x1000, false, false, 530.0, 18},
      {TraceOp::kZero, 0x3000, 0x1000, true, false, 623.0, 23},
  });
}

TEST(MsrCsv, EveryRequestNoSync) {
  auto r = open_trace(kData + "/msr.csv", TraceFormat::kAuto, false);
  EXPECT_EQ(r->format(), TraceFormat::kMsr);
  EXPECT_FALSE(r->records_sync());
  expect_requests(read_all(*r), {
      {TraceOp::kRead, 383496192, 32768, false, false, 0.0, 2},
      {TraceOp::kWrite, 3617396736, 65536, false, false, 1332052.6, 3},
      {TraceOp::kWrite, 3617462272, 4096, false, false, 1332052.6, 4},
      {TraceOp::kRead, 0, 512, false, false, 2332061.6, 5},
  });
}

TEST_F(TraceFiles, GzipIsReadThroughZlib) {
  std::ifstream in(kData + "/fio_v3.iolog", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string path = dir_ + "/t.iolog.gz";
  written_.push_back(path);
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);

  auto plain = read_all(kData + "/fio_v3.iolog", TraceFormat::kAuto);
  auto r = open_trace(path, TraceFormat::kAuto, false);
  EXPECT_EQ(r->format(), TraceFormat::kFioV3);
  auto zipped = read_all(*r);
  ASSERT_EQ(zipped.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(zipped[i].offset_bytes, plain[i].offset_bytes);
    EXPECT_EQ(zipped[i].len_bytes, plain[i].len_bytes);
    EXPECT_EQ(zipped[i].time_us, plain[i].time_us);
    EXPECT_EQ(zipped[i].line, plain[i].line);
  }
  // Progress counts the compressed bytes.
  EXPECT_LT(r->size_bytes(), text.size());
  EXPECT_EQ(r->position_bytes(), r->size_bytes());
}

TEST_F(TraceFiles, CrLfAndNoFinalNewline) {
  std::string path = write("t.csv",
                           "128166372003061629,hm,1,Read,512,4096,1\r\n"
                           "128166372003061639,hm,1,Write,1024,512,1");
  expect_requests(read_all(path, TraceFormat::kAuto), {
      {TraceOp::kRead, 512, 4096, false, false, 0.0, 1},
      {TraceOp::kWrite, 1024, 512, false, false, 1.0, 2},
  });
}

TEST_F(TraceFiles, UnknownAndMissingFiles) {
  std::string path = write("notes.txt", "\n# a comment\nhello world\n");
  EXPECT_EQ(error_of("\n# a comment\nhello world\n", TraceFormat::kAuto, "notes.txt"),
            path + ": not a trace vld-bench replay reads (fio iolog v2/v3, blkparse, nbdkit "
                   "log filter, MSR-Cambridge CSV); name one with --format");
  try {
    open_trace(dir_ + "/absent.log", TraceFormat::kAuto, false);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), dir_ + "/absent.log: No such file or directory");
    EXPECT_EQ(e.err(), ENOENT);
  }
}

TEST_F(TraceFiles, OnlyNonRequestLinesGiveNoRequests) {
  EXPECT_TRUE(read_all(write("a.iolog", "fio version 3 iolog\n1 /f add\n2 /f open\n3 /f close\n"),
                       TraceFormat::kAuto).empty());
  EXPECT_TRUE(read_all(write("b.txt",
                             "  8,0    0        1     0.000000000  4262  Q  WS 8 + 8 [fio]\n"
                             "  8,0    0        2     0.000001000  4262  D  WS 8 + 8 [fio]\n"
                             "CPU0 (8,0):\n Reads Queued:  0,  0KiB\n"),
                       TraceFormat::kAuto).empty());  // issued, never completed
  EXPECT_TRUE(read_all(write("c.log",
                             "2026-12-06 17:26:41.635681 connection=1 Connect export=\"\"\n"
                             "2026-12-06 17:26:41.635682 connection=1 Frobnicate id=1 ...\n"
                             "2026-12-06 17:26:41.639192 connection=1 Disconnect "
                             "transactions=0\n"),
                       TraceFormat::kAuto).empty());
  EXPECT_TRUE(read_all(write("d.csv", "Timestamp,Hostname,DiskNumber,Type,Offset,Size,"
                                      "ResponseTime\n"),
                       TraceFormat::kMsr).empty());
}

TEST_F(TraceFiles, FioMalformedLines) {
  const std::string p = dir_ + "/t.trace";
  const std::string v3 = "fio version 3 iolog\n";
  EXPECT_EQ(error_of(v3 + "100 /f write 12x 4096\n", TraceFormat::kFioV3),
            p + ":2: '12x' is not a number; expected the offset in bytes (a decimal integer)");
  EXPECT_EQ(error_of(v3 + "100 /f write 0 4096\n100 /f Wrte 0 4096\n", TraceFormat::kAuto),
            p + ":3: 'Wrte' is not a fio iolog action; expected read, write, sync, datasync, "
                "trim, add, open or close");
  EXPECT_EQ(error_of(v3 + "100 /f write 4096\n", TraceFormat::kFioV3),
            p + ":2: missing the length of 'write'; expected 'TIME FILE ACTION [OFFSET "
                "LENGTH]'");
  EXPECT_EQ(error_of(v3 + "100 /f\n", TraceFormat::kFioV3),
            p + ":2: missing the action; expected 'TIME FILE ACTION [OFFSET LENGTH]'");
  EXPECT_EQ(error_of(v3 + "200 /f write 0 512\n100 /f read 0 512\n", TraceFormat::kFioV3),
            p + ":3: time 100 is before the previous request's time 200; expected times "
                "that never decrease");
  EXPECT_EQ(error_of(v3 + "100 /f read 0 512 9\n", TraceFormat::kFioV3),
            p + ":2: unexpected '9' after the length; expected the end of the line");
  EXPECT_EQ(error_of(v3, TraceFormat::kFioV2),
            p + ":1: 'fio version 3 iolog' is not a fio iolog header; expected 'fio version 2 "
                "iolog' as the first line");
}

TEST_F(TraceFiles, BlkparseMalformedLines) {
  const std::string p = dir_ + "/t.trace";
  const std::string head = "  8,0    0        1     0.000001000     0  ";
  EXPECT_EQ(error_of(head + "C   W 12x + 8 [0]\n", TraceFormat::kBlkparse),
            p + ":1: '12x' is not a number; expected the SECTOR (a decimal integer)");
  EXPECT_EQ(error_of(head + "C  WX 8 + 8 [0]\n", TraceFormat::kBlkparse),
            p + ":1: 'WX' is not a blkparse RWBS; expected F (preflush), then R, W, D or N, "
                "then any of F (FUA), A, S, M");
  EXPECT_EQ(error_of("  8,0    0        1\n", TraceFormat::kBlkparse),
            p + ":1: missing the time; expected 'MAJOR,MINOR CPU SEQUENCE "
                "SECONDS.NANOSECONDS PID ACTION RWBS [SECTOR [+ NBLOCKS]] [ERROR]'");
  EXPECT_EQ(error_of(head + "C   W 8 + 8\n", TraceFormat::kBlkparse),
            p + ":1: missing the completion's error '[ERROR]'; expected 'MAJOR,MINOR CPU "
                "SEQUENCE SECONDS.NANOSECONDS PID ACTION RWBS [SECTOR [+ NBLOCKS]] [ERROR]'");
  EXPECT_EQ(error_of("  8,0    0        1     0.00000x000     0  C   W 8 + 8 [0]\n",
                     TraceFormat::kBlkparse),
            p + ":1: '0.00000x000' is not a blkparse time; expected SECONDS.NANOSECONDS");
  EXPECT_EQ(error_of("8:0 0 1 0.000001000 0 C W 8 + 8 [0]\n", TraceFormat::kBlkparse),
            p + ":1: '8:0' is not a device MAJOR,MINOR; expected a blkparse event 'MAJOR,MINOR "
                "CPU SEQUENCE SECONDS.NANOSECONDS PID ACTION RWBS [SECTOR [+ NBLOCKS]] "
                "[ERROR]'");
}

TEST_F(TraceFiles, BlkparseClampsATimeThatGoesBack) {
  std::string path = write("t.txt",
                           "  8,0    0        1     0.000005000     0  C   W 8 + 8 [0]\n"
                           "  8,0    1        2     0.000003000     0  C   R 64 + 8 [0]\n"
                           "  8,0    1        3     0.000009000     0  C   R 72 + 8 [0]\n");
  expect_requests(read_all(path, TraceFormat::kBlkparse), {
      {TraceOp::kWrite, 8 * 512, 4096, false, false, 0.0, 1},
      {TraceOp::kRead, 64 * 512, 4096, false, false, 0.0, 2},
      {TraceOp::kRead, 72 * 512, 4096, false, false, 4.0, 3},
  });
}

TEST_F(TraceFiles, NbdkitLogMalformedLines) {
  const std::string p = dir_ + "/t.trace";
  const std::string t = "2026-12-06 17:26:41.636277 connection=1 ";
  EXPECT_EQ(error_of(t + "Write id=1 offset=0x0 count=0x1g fua=0 ...\n", TraceFormat::kNbdkitLog),
            p + ":1: '0x1g' is not a number; expected count= in bytes (hexadecimal, 0x...)");
  EXPECT_EQ(error_of(t + "Write id=1 offset=0x0 fua=0 ...\n", TraceFormat::kNbdkitLog),
            p + ":1: missing count= of write; expected 'DATE TIME connection=N ACTION id=N "
                "offset=0x... count=0x... [fua=0|1] ...'");
  EXPECT_EQ(error_of(t + "Read offset=0x0 count=0x200 ...\n", TraceFormat::kNbdkitLog),
            p + ":1: missing id=N after 'Read'; expected 'DATE TIME connection=N ACTION id=N "
                "offset=0x... count=0x... [fua=0|1] ...'");
  EXPECT_EQ(error_of(t + "Read id=1 offset=0x0 count=0x200 ...\n" + t + "...Read id=1\n",
                     TraceFormat::kNbdkitLog),
            p + ":2: missing return=N; expected 'DATE TIME connection=N ...ACTION id=N "
                "return=N ...'");
  EXPECT_EQ(error_of("2026-13-06 17:26:41.636277 connection=1 Flush id=1 ...\n",
                     TraceFormat::kNbdkitLog),
            p + ":1: '2026-13-06 17:26:41.636277' is not a log filter time; expected "
                "'YYYY-MM-DD HH:MM:SS.UUUUUU'");
  EXPECT_EQ(error_of(t + "Flush id=1 ...\n" + t + "Flush id=1 ...\n", TraceFormat::kNbdkitLog),
            p + ":2: id=1 of connection=1 is already in flight; expected its return before "
                "the id is used again");
}

TEST_F(TraceFiles, MsrMalformedLines) {
  const std::string p = dir_ + "/t.trace";
  EXPECT_EQ(error_of("12x,hm,1,Read,0,512,1\n", TraceFormat::kMsr),
            p + ":1: '12x' is not a number; expected the Timestamp in 100 ns ticks (a decimal "
                "integer)");
  EXPECT_EQ(error_of("1,hm,1,Wrte,0,512,1\n", TraceFormat::kMsr),
            p + ":1: 'Wrte' is not an MSR request Type; expected Read or Write");
  EXPECT_EQ(error_of("1,hm,1,Read,0,512\n", TraceFormat::kMsr),
            p + ":1: 6 fields; expected 7 comma-separated fields "
                "'Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime'");
  EXPECT_EQ(error_of("20,hm,1,Read,0,512,1\n10,hm,1,Read,0,512,1\n", TraceFormat::kAuto),
            p + ":2: time 10 is before the previous request's time 20; expected times that "
                "never decrease");
}

TEST_F(TraceFiles, SkipBadCountsAndGoesOn) {
  std::string fio = write("a.iolog",
                          "fio version 3 iolog\n"
                          "100 /f write 0 512\n"
                          "101 /f Wrte 0 512\n"   // unknown action
                          "50 /f read 0 512\n"    // time goes back
                          "102 /f read 0\n"       // missing length
                          "103 /f read 512 512\n");
  auto r = open_trace(fio, TraceFormat::kAuto, true);
  expect_requests(read_all(*r), {
      {TraceOp::kWrite, 0, 512, false, false, 0.0, 2},
      {TraceOp::kRead, 512, 512, false, false, 3.0, 6},
  });
  EXPECT_EQ(r->skipped_lines(), 3u);

  std::string msr = write("b.csv",
                          "1,hm,1,Read,0,512,1\n"
                          "x,hm,1,Read,0,512,1\n"
                          "2,hm,1,Read,512\n"
                          "3,hm,1,Write,1024,512,1\n");
  r = open_trace(msr, TraceFormat::kMsr, true);
  EXPECT_EQ(read_all(*r).size(), 2u);
  EXPECT_EQ(r->skipped_lines(), 2u);

  std::string blk = write("c.txt",
                          "  8,0 0 1 0.000001000 0 C W 8 + 8 [0]\n"
                          "  8,0 0 2 0.000002000 0 C Q 8 + 8 [0]\n"
                          "garbage\n"
                          "  8,0 0 3 0.000003000 0 C R 8 + 8 [0]\n");
  r = open_trace(blk, TraceFormat::kBlkparse, true);
  EXPECT_EQ(read_all(*r).size(), 2u);
  EXPECT_EQ(r->skipped_lines(), 2u);

  std::string nbd = write("d.log",
                          "2026-12-06 17:26:41.000001 connection=1 Read id=1 offset=0x0 "
                          "count=0x200 ...\n"
                          "2026-12-06 17:26:41.000002 connection=1 Read id=2 offset=0xq "
                          "count=0x200 ...\n"
                          "2026-12-06 17:26:41.000003 connection=1 ...Read id=1 return=0\n");
  r = open_trace(nbd, TraceFormat::kNbdkitLog, true);
  EXPECT_EQ(read_all(*r).size(), 1u);
  EXPECT_EQ(r->skipped_lines(), 1u);
}

TEST_F(TraceFiles, ALineLongerThanTheBufferIsAnError) {
  std::string p = write("long.csv", "1,hm,1,Read,0,512,1\n" + std::string(1100000, 'x') + "\n");
  auto r = open_trace(p, TraceFormat::kMsr, true);
  TraceRequest req;
  EXPECT_TRUE(r->next(req));
  try {
    r->next(req);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), p + ":2: a line longer than 1 MiB; expected a text trace");
  }
}

TEST(ArrivalOrder, HoldsACompletedRequestBehindAnEarlierOne) {
  trace::ArrivalOrder order;
  TraceRequest a, b, out;
  a.offset_bytes = 1;
  b.offset_bytes = 2;
  int64_t t = 0;
  ASSERT_TRUE(order.arrive({1, 1}, a, 10));
  ASSERT_TRUE(order.arrive({1, 2}, b, 20));
  EXPECT_FALSE(order.arrive({1, 2}, b, 30));  // already in flight
  order.complete({1, 2}, true);
  EXPECT_FALSE(order.pop(out, t));  // a is still in flight
  order.complete({1, 1}, true);
  ASSERT_TRUE(order.pop(out, t));
  EXPECT_EQ(out.offset_bytes, 1u);
  EXPECT_EQ(t, 10);
  ASSERT_TRUE(order.pop(out, t));
  EXPECT_EQ(out.offset_bytes, 2u);
  EXPECT_EQ(t, 20);
  EXPECT_FALSE(order.pop(out, t));
}

TEST(ArrivalOrder, DropsFailedAndLostRequests) {
  trace::ArrivalOrder order(2);
  TraceRequest r, out;
  int64_t t = 0;
  r.offset_bytes = 1;
  order.arrive({0, 1}, r, 1);  // never completes
  r.offset_bytes = 2;
  order.arrive({0, 2}, r, 2);
  order.complete({0, 2}, false);  // failed
  r.offset_bytes = 3;
  order.arrive({0, 3}, r, 3);  // the window is full: request 1 is taken as lost
  EXPECT_EQ(order.in_flight({0, 1}), nullptr);
  order.complete({0, 3}, true);
  ASSERT_TRUE(order.pop(out, t));
  EXPECT_EQ(out.offset_bytes, 3u);
  r.offset_bytes = 4;
  order.arrive({0, 4}, r, 4);
  order.drop_in_flight();
  EXPECT_FALSE(order.pop(out, t));
}

}  // namespace
}  // namespace vld
