// OpenProgress (plugin/open_progress.h): what a long open prints on stderr.
#include "plugin/open_progress.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace vld {
namespace {

TEST(OpenProgress, QuietForShortOpens) {
  testing::internal::CaptureStderr();
  {
    OpenProgress p("disk.img");  // a second's grace: these calls come at once
    ScanProgress cb = p.callback();
    cb("walking the map", 4096, 262144);
    cb("scanning the window", 3, 512);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(OpenProgress, OneLineASecondThenHowLongItTook) {
  testing::internal::CaptureStderr();
  {
    OpenProgress p("disk.img", std::chrono::milliseconds(0));
    ScanProgress cb = p.callback();
    cb("walking the map", 4096, 262144);
    cb("walking the map", 8192, 262144);  // within the second: not printed
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("nbdkit: vld: disk.img: opening: walking the map: 4096 of at most 262144 "
                     "map sectors ("),
            0u)
      << err;
  EXPECT_EQ(err.find("8192"), std::string::npos) << err;
  EXPECT_NE(err.find("\nnbdkit: vld: disk.img: opened in "), std::string::npos) << err;
}

TEST(OpenProgress, ScansCountTracks) {
  testing::internal::CaptureStderr();
  {
    OpenProgress p("d", std::chrono::milliseconds(0));
    p.callback()("scanning the window", 3, 512);
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("nbdkit: vld: d: opening: scanning the window: 3 of 512 tracks ("), 0u) << err;
}

}  // namespace
}  // namespace vld
