// plugin/options.h: sizes, every key=value, format options and conflicts
// with an existing image. Every error must name the parameter.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/modes/mode_image.h"
#include "geometry/presets.h"
#include "plugin/options.h"
#include "plugin/parameters.h"
#include "tests/parameter_values.h"

namespace vld {
namespace {

bool mentions(const std::string& text, const std::string& word) {
  return text.find(word) != std::string::npos;
}

// ------------------------------------------------------- nbdkit_values

// check_size and check_uint64 accept what nbdkit 1.32's nbdkit_parse_size
// and nbdkit_parse_uint64_t accept, with the same value, and classify the
// rest in the order those test it.
TEST(NbdkitValues, SizesAsNbdkitParseSizeReadsThem) {
  const std::pair<const char*, uint64_t> good[] = {
      {"0", 0},
      {"4096", 4096},
      {"100B", 100},
      {"100b", 100},
      {"131072s", 64ull << 20},
      {"1S", 512},
      {"512K", 512u << 10},
      {"512k", 512u << 10},
      {"1M", 1u << 20},
      {"1G", 1ull << 30},
      {"1g", 1ull << 30},
      {"2T", 2ull << 40},
      {"3P", 3ull << 50},
      {"7E", 7ull << 60},
      {"+1G", 1ull << 30},
      {" \t1G", 1ull << 30},
      {"-0", 0},  // strtoimax's -0 is not negative
      {"9223372036854775807", INT64_MAX},
      {"8191P", 8191ull << 50},
  };
  for (auto [text, want] : good) {
    const CheckedValue c = check_size(text);
    EXPECT_EQ(c.check, ValueCheck::kOk) << "\"" << text << "\"";
    EXPECT_EQ(c.value, want) << "\"" << text << "\"";
    EXPECT_EQ(builtin_parsers().parse_size(text), static_cast<int64_t>(want)) << text;
  }
  const std::pair<const char*, ValueCheck> bad[] = {
      {"", ValueCheck::kMalformed},     {"G", ValueCheck::kMalformed},
      {"1X", ValueCheck::kMalformed},   {"1.5G", ValueCheck::kMalformed},
      {"1G ", ValueCheck::kMalformed},  {"1 G", ValueCheck::kMalformed},
      {"1GiB", ValueCheck::kMalformed}, {"1KB", ValueCheck::kMalformed},
      {"0x10", ValueCheck::kMalformed}, {"K1", ValueCheck::kMalformed},
      {"-1", ValueCheck::kNegative},    {"-1X", ValueCheck::kNegative},
      {"8E", ValueCheck::kTooLarge},    {"16E", ValueCheck::kTooLarge},
      {"8192P", ValueCheck::kTooLarge}, {"9223372036854775808", ValueCheck::kTooLarge},
      {"18446744073709551615", ValueCheck::kTooLarge},
      {"99999999999999999999X", ValueCheck::kTooLarge},  // nbdkit tests the range first
  };
  for (auto [text, want] : bad) {
    EXPECT_EQ(check_size(text).check, want) << "\"" << text << "\"";
    EXPECT_EQ(builtin_parsers().parse_size(text), -1) << "\"" << text << "\"";
  }
}

TEST(NbdkitValues, WholeNumbersAsNbdkitParseUint64Reads) {
  const std::pair<const char*, uint64_t> good[] = {
      {"0", 0},       {"42", 42},     {"0x2a", 42}, {"0X2A", 42}, {"052", 42},
      {"+42", 42},    {" 42", 42},    {"00", 0},
      {"18446744073709551615", UINT64_MAX},         {"0xffffffffffffffff", UINT64_MAX},
  };
  for (auto [text, want] : good) {
    const CheckedValue c = check_uint64(text);
    EXPECT_EQ(c.check, ValueCheck::kOk) << "\"" << text << "\"";
    EXPECT_EQ(c.value, want) << "\"" << text << "\"";
    uint64_t r = 0;
    EXPECT_EQ(builtin_parsers().parse_uint64_t("test", text, &r), 0) << text;
    EXPECT_EQ(r, want) << text;
  }
  const std::pair<const char*, ValueCheck> bad[] = {
      {"", ValueCheck::kMalformed},    {" ", ValueCheck::kMalformed},
      {"x", ValueCheck::kMalformed},   {"42 ", ValueCheck::kMalformed},
      {"1.5", ValueCheck::kMalformed}, {"08", ValueCheck::kMalformed},
      {"0x", ValueCheck::kMalformed},  {"1K", ValueCheck::kMalformed},
      {"-1", ValueCheck::kNegative},   {" -0", ValueCheck::kNegative},
      {"18446744073709551616", ValueCheck::kTooLarge},
      {"0x10000000000000000", ValueCheck::kTooLarge},
  };
  for (auto [text, want] : bad) {
    EXPECT_EQ(check_uint64(text).check, want) << "\"" << text << "\"";
    uint64_t r = 7;
    EXPECT_EQ(builtin_parsers().parse_uint64_t("test", text, &r), -1) << text;
    EXPECT_EQ(r, 7u) << "*r changed on error: " << text;
  }
}

TEST(NbdkitValues, BooleansAsNbdkitParseBoolReadsThem) {
  for (const char* t : {"1", "true", "TRUE", "t", "T", "yes", "Yes", "y", "on", "ON", "oN"}) {
    EXPECT_EQ(check_bool(t), true) << t;
    EXPECT_EQ(builtin_parsers().parse_bool(t), 1) << t;
  }
  for (const char* f : {"0", "false", "False", "f", "no", "NO", "n", "off", "Off"}) {
    EXPECT_EQ(check_bool(f), false) << f;
    EXPECT_EQ(builtin_parsers().parse_bool(f), 0) << f;
  }
  for (const char* bad : {"", "2", "01", "00", "onn", "of", "yess", " on", "on ", "enable"}) {
    EXPECT_EQ(check_bool(bad), std::nullopt) << "\"" << bad << "\"";
    EXPECT_EQ(builtin_parsers().parse_bool(bad), -1) << bad;
  }
}

// ---------------------------------------------------------- set_option

TEST(SetOption, EveryImageKeyAcceptsAGoodValue) {
  PluginOptions o;
  EXPECT_EQ(set_option(&o, "file", "/tmp/disk.img"), "");
  EXPECT_EQ(o.file, "/tmp/disk.img");
  EXPECT_EQ(set_option(&o, "size", "1G"), "");
  EXPECT_EQ(o.size_bytes, 1ull << 30);
  EXPECT_EQ(set_option(&o, "geometry", "hp97560"), "");
  EXPECT_EQ(o.geometry, "hp97560");
  EXPECT_EQ(set_option(&o, "mode", "vld"), "");
  EXPECT_EQ(o.mode, DiskMode::kVld);
  EXPECT_EQ(set_option(&o, "mode", "inplace"), "");
  EXPECT_EQ(o.mode, DiskMode::kInplace);
  EXPECT_EQ(set_option(&o, "mode", "lld"), "");
  EXPECT_EQ(o.mode, DiskMode::kLld);
}

TEST(SetOption, EveryLldKeyAcceptsAGoodValue) {
  PluginOptions o;
  EXPECT_EQ(set_option(&o, "segment", "1M"), "");
  EXPECT_EQ(o.segment_bytes, 1u << 20);
  EXPECT_EQ(set_option(&o, "nvram", "6100000"), "");
  EXPECT_EQ(o.nvram_bytes, 6'100'000u);
  EXPECT_EQ(set_option(&o, "nvram", "0"), "");  // no NVRAM
  EXPECT_EQ(o.nvram_bytes, 0u);
  EXPECT_EQ(set_option(&o, "partial", "1"), "");
  EXPECT_EQ(o.disk.lld.partial_percent, 1u);
  EXPECT_EQ(set_option(&o, "partial", "100"), "");
  EXPECT_EQ(o.disk.lld.partial_percent, 100u);
  EXPECT_EQ(set_option(&o, "cleaner_policy", "cost-benefit"), "");
  EXPECT_EQ(o.disk.lld.cleaner_policy, CleanerPolicy::kCostBenefit);
  EXPECT_EQ(set_option(&o, "cleaner_policy", "greedy"), "");
  EXPECT_EQ(o.disk.lld.cleaner_policy, CleanerPolicy::kGreedy);
  EXPECT_EQ(set_option(&o, "nvram_us", "2.5"), "");
  EXPECT_EQ(o.disk.lld.nvram_us_per_4k, 2.5);
  EXPECT_EQ(set_option(&o, "nvram_us", "0"), "");
  EXPECT_EQ(o.disk.lld.nvram_us_per_4k, 0.0);
}

TEST(SetOption, EveryGeometryKeyAcceptsAGoodValue) {
  PluginOptions o;
  EXPECT_EQ(set_option(&o, "block", "64K"), "");
  EXPECT_EQ(o.block_bytes, 65536u);
  EXPECT_EQ(set_option(&o, "block", "512"), "");
  EXPECT_EQ(o.block_bytes, 512u);
  EXPECT_EQ(set_option(&o, "spare", "0"), "");
  EXPECT_EQ(o.spare_percent, 0u);
  EXPECT_EQ(set_option(&o, "spare", "1000"), "");
  EXPECT_EQ(o.spare_percent, 1000u);
  EXPECT_EQ(set_option(&o, "sectors_per_track", "100"), "");
  EXPECT_EQ(o.sectors_per_track, 100u);
  EXPECT_EQ(set_option(&o, "tracks_per_cylinder", "8"), "");
  EXPECT_EQ(o.tracks_per_cylinder, 8u);
  EXPECT_EQ(set_option(&o, "cylinders", "5000"), "");
  EXPECT_EQ(o.cylinders, 5000u);
  EXPECT_EQ(set_option(&o, "rpm", "7200"), "");
  EXPECT_EQ(o.rpm, 7200u);
  EXPECT_EQ(set_option(&o, "head_switch_us", "250.5"), "");
  EXPECT_EQ(o.head_switch_us, 250.5);
  EXPECT_EQ(set_option(&o, "overhead_us", "0"), "");
  EXPECT_EQ(o.overhead_us, 0.0);
  EXPECT_EQ(set_option(&o, "seek", "3.24,0.400,383,8.00,0.008"), "");
  EXPECT_EQ(o.seek, SeekCurve(3.24, 0.4, 383, 8.0, 0.008));
}

TEST(SetOption, EveryServingAndVldKeyAcceptsAGoodValue) {
  PluginOptions o;
  EXPECT_EQ(set_option(&o, "latency", "none"), "");
  EXPECT_EQ(o.latency, LatencyMode::kNone);
  EXPECT_EQ(set_option(&o, "latency", "sleep"), "");
  EXPECT_EQ(o.latency, LatencyMode::kSleep);
  EXPECT_EQ(set_option(&o, "statsfile", "/tmp/stats.json"), "");
  EXPECT_EQ(o.statsfile, "/tmp/stats.json");
  EXPECT_EQ(set_option(&o, "seed", "18446744073709551615"), "");
  EXPECT_EQ(o.seed, UINT64_MAX);
  EXPECT_EQ(o.disk.vld.compactor.seed, UINT64_MAX);  // seed= drives the random policy
  EXPECT_EQ(set_option(&o, "track_buffer", "off"), "");
  EXPECT_FALSE(o.disk.track_buffer);
  EXPECT_EQ(set_option(&o, "track_buffer", "on"), "");
  EXPECT_TRUE(o.disk.track_buffer);
  EXPECT_EQ(set_option(&o, "compactor", "off"), "");
  EXPECT_FALSE(o.disk.vld.compactor.enabled);
  EXPECT_EQ(set_option(&o, "compactor", "on"), "");
  EXPECT_TRUE(o.disk.vld.compactor.enabled);
  EXPECT_EQ(set_option(&o, "compactor_policy", "random"), "");
  EXPECT_EQ(o.disk.vld.compactor.policy, CompactionPolicy::kRandom);
  EXPECT_EQ(set_option(&o, "compactor_policy", "cost-benefit"), "");
  EXPECT_EQ(o.disk.vld.compactor.policy, CompactionPolicy::kCostBenefit);
  EXPECT_EQ(set_option(&o, "compactor_policy", "fewest-live"), "");
  EXPECT_EQ(o.disk.vld.compactor.policy, CompactionPolicy::kFewestLive);
  EXPECT_EQ(set_option(&o, "compactor_quiet_ms", "0"), "");
  EXPECT_EQ(o.compactor_quiet_ms, 0u);
  EXPECT_EQ(set_option(&o, "fill", "60"), "");
  EXPECT_DOUBLE_EQ(o.disk.vld.fill_fraction, 0.60);
  EXPECT_EQ(set_option(&o, "window", "8"), "");
  EXPECT_EQ(o.disk.vld.window_cylinders, 8u);
  for (const std::string& g : preset_names()) {
    EXPECT_EQ(set_option(&o, "geometry", g), "") << g;
    EXPECT_EQ(o.geometry, g);
  }
}

TEST(SetOption, DefaultsAreTheDocumentedOnes) {
  PluginOptions o;
  EXPECT_EQ(o.latency, LatencyMode::kSleep);
  EXPECT_EQ(o.seed, 0u);
  EXPECT_TRUE(o.disk.track_buffer);
  EXPECT_TRUE(o.disk.vld.compactor.enabled);
  EXPECT_EQ(o.disk.vld.compactor.policy, CompactionPolicy::kFewestLive);
  EXPECT_EQ(o.compactor_quiet_ms, 50u);
  EXPECT_EQ(std::string(kDefaultGeometry), "st19101");
  EXPECT_EQ(kDefaultMode, DiskMode::kVld);
  EXPECT_FALSE(o.size_bytes.has_value());
  // mode=lld's (paper 001, section 4.4; LldOptions).
  EXPECT_EQ(o.disk.lld.partial_percent, 75u);
  EXPECT_EQ(o.disk.lld.cleaner_policy, CleanerPolicy::kGreedy);
  EXPECT_EQ(o.disk.lld.nvram_us_per_4k, 20.0);
  EXPECT_FALSE(o.segment_bytes.has_value());
  EXPECT_FALSE(o.nvram_bytes.has_value());
  EXPECT_EQ(kDefaultSegmentBytes, 512u * 1024);
  EXPECT_EQ(kDefaultNvramBytes, 6'100'000u);
}

// tests/parameter_values.h: every good value is taken, every bad one
// refused with one line that starts "key=value" and says what is wrong.
TEST(SetOption, TableOfGoodValues) {
  for (const test::GoodValue& g : test::kGoodValues) {
    PluginOptions o;
    EXPECT_EQ(set_option(&o, g.key, g.value), "") << g.key << "=" << g.value;
  }
}

TEST(SetOption, TableOfBadValues) {
  for (const test::BadValue& b : test::kBadValues) {
    PluginOptions o;
    const std::string kv = std::string(b.key) + "=" + b.value;
    const std::string err = set_option(&o, b.key, b.value);
    EXPECT_EQ(err.rfind(kv, 0), 0u) << kv << " -> \"" << err << "\"";
    EXPECT_TRUE(mentions(err, b.problem)) << kv << " -> \"" << err << "\"";
    EXPECT_FALSE(mentions(err, "\n")) << kv << " -> \"" << err << "\"";
  }
}

// A parameter added to plugin/parameters.h needs rows in the table.
TEST(Parameters, EveryParameterHasGoodAndBadValuesInTheTable) {
  for (const ParameterDoc& p : kParameters) {
    bool good = false, bad = false;
    for (const test::GoodValue& g : test::kGoodValues) good |= std::string(g.key) == p.key;
    for (const test::BadValue& b : test::kBadValues) bad |= std::string(b.key) == p.key;
    EXPECT_TRUE(good) << p.key << "= has no good value in tests/parameter_values.h";
    EXPECT_TRUE(bad) << p.key << "= has no bad value in tests/parameter_values.h";
  }
}

// Every size, whole number and boolean is of its kind's form or out of
// range in one row at least: so the error of each way of being wrong is
// tested for each parameter that can be wrong that way.
TEST(Parameters, TheTableTriesEveryKindsFormAndBounds) {
  for (const ParameterDoc& p : kParameters) {
    const ValueKind k = p.rule.kind;
    if (k != ValueKind::kSize && k != ValueKind::kWholeNumber && k != ValueKind::kOnOff) continue;
    bool malformed = false, range = false;
    for (const test::BadValue& b : test::kBadValues) {
      if (std::string(b.key) != p.key) continue;
      malformed |= mentions(b.problem, "not a");
      range |= mentions(b.problem, "too ") || mentions(b.problem, "negative");
    }
    EXPECT_TRUE(malformed) << p.key << "= has no bad row of the wrong form";
    EXPECT_TRUE(range || k == ValueKind::kOnOff) << p.key << "= has no bad row out of range";
  }
}

// Parsers that stand for nbdkit's: they count their calls, and fail the
// test if handed a text nbdkit would refuse (nbdkit would print a second
// line). parse_size answers 3 sectors whatever the text, to show that the
// value is the parser's.
int g_parser_calls = 0;
const ValueParsers kCountingParsers = {
    [](const char* str) -> int64_t {
      ++g_parser_calls;
      EXPECT_EQ(check_size(str).check, ValueCheck::kOk) << "nbdkit would refuse " << str;
      return 1536;
    },
    [](const char* str) -> int {
      ++g_parser_calls;
      EXPECT_TRUE(check_bool(str).has_value()) << "nbdkit would refuse " << str;
      return *check_bool(str);
    },
    [](const char* what, const char* str, uint64_t* r) -> int {
      ++g_parser_calls;
      EXPECT_EQ(check_uint64(str).check, ValueCheck::kOk) << what << ": nbdkit would refuse "
                                                            << str;
      *r = check_uint64(str).value;
      return 0;
    },
};

TEST(SetOption, ValuesComeFromTheGivenParsers) {
  PluginOptions o;
  g_parser_calls = 0;
  EXPECT_EQ(set_option(&o, "size", "1G", kCountingParsers), "");
  EXPECT_EQ(o.size_bytes, 1536u);
  EXPECT_EQ(set_option(&o, "track_buffer", "no", kCountingParsers), "");
  EXPECT_FALSE(o.disk.track_buffer);
  EXPECT_EQ(set_option(&o, "window", "0x10", kCountingParsers), "");
  EXPECT_EQ(o.disk.vld.window_cylinders, 16u);
  EXPECT_EQ(g_parser_calls, 3);
}

// nbdkit's parsers print a line of their own when they refuse a value:
// set_option() must never hand them one they refuse.
TEST(SetOption, BadValuesNeverReachTheParsersAsTextTheyRefuse) {
  for (const test::BadValue& b : test::kBadValues) {  // kCountingParsers check each call
    PluginOptions o;
    set_option(&o, b.key, b.value, kCountingParsers);
  }
  // Values of the wrong form, negative, or beyond the type are refused
  // before; those the type holds but the parameter does not are read, then
  // bounded.
  for (const char* kv : {"size=abc", "size=16E", "size=-1", "seed=-0", "seed=x",
                         "track_buffer=maybe", "fill=08", "window=99999999999999999999"}) {
    const std::string_view t(kv);
    PluginOptions o;
    const int before = g_parser_calls;
    EXPECT_NE(set_option(&o, t.substr(0, t.find('=')), t.substr(t.find('=') + 1),
                         kCountingParsers),
              "")
        << kv;
    EXPECT_EQ(g_parser_calls, before) << kv << " reached the parser";
  }
}

// If nbdkit refused what the check let through (a future nbdkit), the
// value is refused all the same.
TEST(SetOption, AParserThatRefusesStillRefuses) {
  const ValueParsers refusing = {
      [](const char*) -> int64_t { return -1; },
      [](const char*) -> int { return -1; },
      [](const char*, const char*, uint64_t*) -> int { return -1; },
  };
  for (auto [k, v] : {std::pair{"size", "1G"}, std::pair{"compactor", "on"},
                      std::pair{"fill", "50"}}) {
    PluginOptions o;
    const std::string err = set_option(&o, k, v, refusing);
    EXPECT_TRUE(mentions(err, std::string(k) + "=" + v)) << err;
    EXPECT_TRUE(mentions(err, "refused by nbdkit")) << err;
  }
}

// The error says both the problem and what is accepted, on one line.
TEST(SetOption, ErrorsSayTheProblemAndTheRange) {
  PluginOptions o;
  EXPECT_EQ(set_option(&o, "size", "0"),
            "size=0: too small (at least 512 bytes); expected a size of at least one 512-byte "
            "sector, e.g. size=1G, size=131072s or size=1048576");
  EXPECT_EQ(set_option(&o, "size", "16E"),
            "size=16E: too large (at most 9223372036854775807 bytes); expected a size of at "
            "least one 512-byte sector, e.g. size=1G, size=131072s or size=1048576");
  EXPECT_TRUE(mentions(set_option(&o, "size", "1G!"), "size=1G!: not a size (bytes: "));
  EXPECT_EQ(set_option(&o, "fill", "150"),
            "fill=150: too large (at most 100); expected the percentage an empty track is "
            "filled to, 1-100, e.g. fill=75");
  EXPECT_TRUE(mentions(set_option(&o, "track_buffer", "maybe"),
                       "track_buffer=maybe: not a boolean; expected on or off"));
}

TEST(SetOption, UnknownGeometryListsThePresets) {
  PluginOptions o;
  std::string err = set_option(&o, "geometry", "foo");
  EXPECT_TRUE(mentions(err, "geometry")) << err;
  EXPECT_TRUE(mentions(err, "foo")) << err;
  for (const std::string& g : preset_names()) EXPECT_TRUE(mentions(err, g)) << err;
  EXPECT_FALSE(o.geometry.has_value());
}

TEST(SetOption, UnknownKeyIsNamedWithAPointerToHelp) {
  PluginOptions o;
  std::string err = set_option(&o, "sise", "1G");
  EXPECT_TRUE(mentions(err, "sise")) << err;
  EXPECT_TRUE(mentions(err, "--help")) << err;
  EXPECT_FALSE(o.size_bytes.has_value());
}

TEST(SetOption, HelpListsEveryKey) {
  std::string help = config_help();
  for (const char* key : {"file=", "size=", "mode=", "geometry=", "block=", "spare=",
                          "sectors_per_track=", "tracks_per_cylinder=", "cylinders=", "rpm=",
                          "head_switch_us=", "overhead_us=", "seek=", "latency=", "statsfile=",
                          "seed=", "fill=", "window=", "track_buffer=", "compactor=",
                          "compactor_policy=", "compactor_quiet_ms=", "segment=", "nvram=",
                          "partial=", "cleaner_policy=", "nvram_us="})
    EXPECT_TRUE(mentions(help, key)) << key;
}

// The table both --help and the man page's PARAMETERS are made from
// (plugin/parameters.h) names only parameters set_option() knows, each once.
TEST(Parameters, EveryDocumentedKeyIsAParameter) {
  std::set<std::string> seen;
  for (const ParameterDoc& p : kParameters) {
    EXPECT_TRUE(seen.insert(p.key).second) << p.key << "= is documented twice";
    PluginOptions o;
    std::string why = set_option(&o, p.key, "");
    EXPECT_FALSE(mentions(why, "unknown parameter")) << p.key << ": " << why;
    EXPECT_TRUE(*p.help && *p.pod) << p.key;
  }
}

// Each parameter is one entry of --help: "key=VALUE" at the start of a line,
// its text from the table's column on, in the table's order.
TEST(Parameters, HelpIsMadeFromTheTable) {
  const std::string help = config_help();
  const std::string text = "\n" + help;
  size_t at = 0;
  for (const ParameterDoc& p : kParameters) {
    const std::string head = "\n" + std::string(p.key) + "=" + p.value;
    at = text.find(head, at);
    ASSERT_NE(at, std::string::npos) << head;
    const std::string_view h(p.help);
    const std::string_view first_line = h.substr(0, h.find('\n'));
    EXPECT_EQ(text.substr(at + 1 + kHelpColumn, first_line.size()), first_line) << head;
    ++at;
  }
  EXPECT_NE(help.back(), '\n');
}

// ------------------------------------------------------ format_options

TEST(FormatOptions, SizeIsRequired) {
  PluginOptions o;
  o.file = "new.img";
  FormatOptions f;
  std::string err = format_options(o, &f);
  EXPECT_TRUE(mentions(err, "size=")) << err;
}

TEST(FormatOptions, DefaultsAreSt19101VldFourKiB25Percent) {
  PluginOptions o;
  ASSERT_EQ(set_option(&o, "size", "64M"), "");
  FormatOptions f;
  ASSERT_EQ(format_options(o, &f), "");
  EXPECT_EQ(f.export_bytes, 64u << 20);
  EXPECT_EQ(f.mode, DiskMode::kVld);
  EXPECT_EQ(f.block_bytes, 4096u);
  EXPECT_EQ(f.spare_percent, 25u);
  EXPECT_EQ(f.geometry, *find_preset("st19101"));
  EXPECT_EQ(f.geometry.track_skew_sectors, 22u);  // skews derived
}

TEST(FormatOptions, LldTakesSegmentAndNvramWithTheirDefaults) {
  PluginOptions o;
  ASSERT_EQ(set_option(&o, "size", "64M"), "");
  ASSERT_EQ(set_option(&o, "mode", "lld"), "");
  FormatOptions f;
  ASSERT_EQ(format_options(o, &f), "");
  EXPECT_EQ(f.mode, DiskMode::kLld);
  EXPECT_EQ(f.segment_bytes, 512u * 1024);
  EXPECT_EQ(f.nvram_bytes, 6'100'000u);
  ASSERT_EQ(set_option(&o, "segment", "1M"), "");
  ASSERT_EQ(set_option(&o, "nvram", "0"), "");
  ASSERT_EQ(format_options(o, &f), "");
  EXPECT_EQ(f.segment_bytes, 1u << 20);
  EXPECT_EQ(f.nvram_bytes, 0u);
}

// segment= and nvram= are mode=lld's: with another mode (the default
// included) they are refused, not ignored.
TEST(FormatOptions, SegmentAndNvramNeedModeLld) {
  for (const char* mode : {"", "vld", "inplace"}) {
    for (auto [k, v] : {std::pair{"segment", "512K"}, std::pair{"nvram", "0"}}) {
      PluginOptions o;
      o.file = "new.img";
      ASSERT_EQ(set_option(&o, "size", "64M"), "");
      if (*mode) {
        ASSERT_EQ(set_option(&o, "mode", mode), "");
      }
      ASSERT_EQ(set_option(&o, k, v), "");
      FormatOptions f;
      const std::string err = format_options(o, &f);
      EXPECT_TRUE(mentions(err, std::string(k) + "=")) << mode << ": " << err;
      EXPECT_TRUE(mentions(err, "mode=lld")) << mode << ": " << err;
      EXPECT_TRUE(mentions(err, std::string("mode=") + (*mode ? mode : "vld"))) << err;
    }
  }
}

// partial=, cleaner_policy= and nvram_us= are run-time and mode=lld's; other
// modes ignore them, as mode=inplace ignores fill=, window= and compactor=.
TEST(FormatOptions, LldRunTimeParametersAreIgnoredByOtherModes) {
  PluginOptions o;
  o.file = "new.img";
  for (auto [k, v] : std::vector<std::pair<const char*, const char*>>{
           {"size", "64M"}, {"mode", "inplace"}, {"partial", "50"},
           {"cleaner_policy", "cost-benefit"}, {"nvram_us", "5"}, {"fill", "50"}})
    ASSERT_EQ(set_option(&o, k, v), "") << k;
  FormatOptions f;
  EXPECT_EQ(format_options(o, &f), "");
}

TEST(FormatOptions, OverridesReplaceThePresetAndRederiveSkews) {
  PluginOptions o;
  for (auto [k, v] : std::vector<std::pair<const char*, const char*>>{
           {"size", "16M"}, {"geometry", "st19101"}, {"head_switch_us", "1000"},
           {"overhead_us", "250"}, {"mode", "vld"}, {"block", "8K"}, {"spare", "50"}})
    ASSERT_EQ(set_option(&o, k, v), "") << k;
  FormatOptions f;
  ASSERT_EQ(format_options(o, &f), "");
  EXPECT_EQ(f.mode, DiskMode::kVld);
  EXPECT_EQ(f.block_bytes, 8192u);
  EXPECT_EQ(f.spare_percent, 50u);
  EXPECT_EQ(f.geometry.head_switch.count(), 1'000'000);
  EXPECT_EQ(f.geometry.controller_overhead.count(), 250'000);
  // 1 ms / 23,437.5 ns = 42.67 -> 43 sectors; the cylinder skew covers
  // max(seek(1) = 0.5 ms, head switch 1 ms): 43 too (22 with the preset's).
  EXPECT_EQ(f.geometry.track_skew_sectors, 43u);
  EXPECT_EQ(f.geometry.cylinder_skew_sectors, 43u);

  PluginOptions r;
  ASSERT_EQ(set_option(&r, "size", "16M"), "");
  ASSERT_EQ(set_option(&r, "rpm", "5400"), "");
  ASSERT_EQ(set_option(&r, "seek", "3.24,0.400,383,8.00,0.008"), "");
  ASSERT_EQ(format_options(r, &f), "");
  EXPECT_EQ(f.geometry.rpm, 5400u);
  EXPECT_EQ(f.geometry.seek, SeekCurve(3.24, 0.4, 383, 8.0, 0.008));
  // Sector = 60e9 / 5400 / 256 = 43,402.8 ns: 0.5 ms -> 11.5 -> 12;
  // seek(1) = 3.64 ms -> 83.9 -> 84.
  EXPECT_EQ(f.geometry.track_skew_sectors, 12u);
  EXPECT_EQ(f.geometry.cylinder_skew_sectors, 84u);
}

TEST(FormatOptions, OverriddenGeometryKeepsThePresetNameAndTheOverride) {
  // geometry/drive_geometry.h: name is the preset the geometry started from;
  // overrides live in the fields beside it, so that reopening with the same
  // geometry= and overrides agrees (ConflictsWithImage tests).
  PluginOptions o;
  ASSERT_EQ(set_option(&o, "size", "16M"), "");
  ASSERT_EQ(set_option(&o, "rpm", "5400"), "");
  FormatOptions f;
  ASSERT_EQ(format_options(o, &f), "");
  EXPECT_EQ(f.geometry.name, "st19101");
  EXPECT_EQ(f.geometry.rpm, 5400u);
  EXPECT_NE(f.geometry, *find_preset("st19101"));
  // Without overrides the geometry is the preset, name and all.
  PluginOptions p;
  ASSERT_EQ(set_option(&p, "size", "16M"), "");
  ASSERT_EQ(set_option(&p, "geometry", "savvio10k4"), "");
  ASSERT_EQ(format_options(p, &f), "");
  EXPECT_EQ(f.geometry, *find_preset("savvio10k4"));
}

TEST(FormatOptions, BadOverrideNamesTheParameter) {
  struct Case {
    const char* key;
    const char* value;
  };
  for (const Case& k : {Case{"sectors_per_track", "4"}, Case{"rpm", "100"},
                        Case{"tracks_per_cylinder", "5000"}}) {
    PluginOptions o;
    ASSERT_EQ(set_option(&o, "size", "1M"), "");
    ASSERT_EQ(set_option(&o, k.key, k.value), "") << k.key;
    FormatOptions f;
    std::string err = format_options(o, &f);
    EXPECT_TRUE(mentions(err, k.key)) << k.key << "=" << k.value << ": \"" << err << "\"";
  }
  // A seek curve that drops within the (smaller) drive.
  PluginOptions o;
  ASSERT_EQ(set_option(&o, "size", "1M"), "");
  o.seek = SeekCurve(5, 1, 10, 0, 0.001);  // parse() would refuse it already
  FormatOptions f;
  EXPECT_TRUE(mentions(format_options(o, &f), "seek"));
}

// ------------------------------------------------ conflicts_with_image

struct Image {
  PluginOptions made_with;
  Superblock sb;
};

Image st19101_image() {
  Image im;
  PluginOptions& o = im.made_with;
  o.file = "disk.img";
  EXPECT_EQ(set_option(&o, "size", "64M"), "");
  EXPECT_EQ(set_option(&o, "geometry", "st19101"), "");
  FormatOptions f;
  EXPECT_EQ(format_options(o, &f), "");
  im.sb = plan_image(f);
  return im;
}

TEST(ConflictsWithImage, AbsentOrAgreeingOptionsAreFine) {
  Image im = st19101_image();
  PluginOptions none;
  none.file = "disk.img";
  EXPECT_EQ(conflicts_with_image(none, im.sb), "");
  EXPECT_EQ(conflicts_with_image(im.made_with, im.sb), "");
  // Every format-time parameter, repeated with the image's own value.
  PluginOptions all;
  all.file = "disk.img";
  for (auto [k, v] : std::vector<std::pair<const char*, const char*>>{
           {"size", "64M"}, {"geometry", "st19101"}, {"mode", "vld"}, {"block", "4K"},
           {"spare", "25"}, {"sectors_per_track", "256"}, {"tracks_per_cylinder", "16"},
           {"cylinders", "6962"}, {"rpm", "10000"}, {"head_switch_us", "500"},
           {"overhead_us", "100"}, {"seek", "0.28341,0.21659,101,2.6815,0.0011657"}})
    ASSERT_EQ(set_option(&all, k, v), "") << k;
  EXPECT_EQ(conflicts_with_image(all, im.sb), "");
  // Run-time parameters never conflict.
  ASSERT_EQ(set_option(&all, "latency", "none"), "");
  ASSERT_EQ(set_option(&all, "seed", "7"), "");
  ASSERT_EQ(set_option(&all, "statsfile", "s.json"), "");
  EXPECT_EQ(conflicts_with_image(all, im.sb), "");
}

TEST(ConflictsWithImage, NamesTheConflictingParameter) {
  Image im = st19101_image();
  struct Case {
    const char* key;
    const char* value;
    const char* image_value;  // how the image's value appears in the message
  };
  const Case cases[] = {
      {"size", "1G", "67108864"},
      {"geometry", "hp97560", "st19101"},
      {"mode", "inplace", "vld"},
      {"block", "8192", "4096"},
      {"spare", "10", "25"},
      {"sectors_per_track", "255", "256"},
      {"tracks_per_cylinder", "15", "16"},
      {"cylinders", "7000", "6962"},
      {"rpm", "7200", "10000"},
      {"head_switch_us", "400", "500"},
      {"overhead_us", "200", "100"},
      {"seek", "3.24,0.400,383,8.00,0.008", "0.2834"},
  };
  for (const Case& k : cases) {
    PluginOptions o;
    o.file = "disk.img";
    ASSERT_EQ(set_option(&o, k.key, k.value), "") << k.key;
    std::string err = conflicts_with_image(o, im.sb);
    EXPECT_TRUE(mentions(err, std::string(k.key) + "=")) << k.key << ": \"" << err << "\"";
    EXPECT_TRUE(mentions(err, k.image_value)) << k.key << ": \"" << err << "\"";
    EXPECT_TRUE(mentions(err, "disk.img")) << err;
  }
}

Image lld_image(const char* segment, const char* nvram) {
  Image im;
  PluginOptions& o = im.made_with;
  o.file = "disk.img";
  EXPECT_EQ(set_option(&o, "size", "64M"), "");
  EXPECT_EQ(set_option(&o, "mode", "lld"), "");
  if (*segment) {
    EXPECT_EQ(set_option(&o, "segment", segment), "");
  }
  if (*nvram) {
    EXPECT_EQ(set_option(&o, "nvram", nvram), "");
  }
  FormatOptions f;
  EXPECT_EQ(format_options(o, &f), "");
  im.sb = plan_image(f);
  return im;
}

TEST(ConflictsWithImage, LldImageRecordsSegmentAndNvram) {
  Image im = lld_image("1M", "8M");
  EXPECT_EQ(conflicts_with_image(im.made_with, im.sb), "");
  PluginOptions same;
  same.file = "disk.img";
  for (auto [k, v] : std::vector<std::pair<const char*, const char*>>{
           {"mode", "lld"}, {"segment", "1048576"}, {"nvram", "8M"}, {"partial", "10"},
           {"cleaner_policy", "cost-benefit"}, {"nvram_us", "3"}})
    ASSERT_EQ(set_option(&same, k, v), "") << k;
  EXPECT_EQ(conflicts_with_image(same, im.sb), "");
  struct Case {
    const char* key;
    const char* value;
    const char* image_value;
  };
  for (const Case& k : {Case{"segment", "512K", "1048576"}, Case{"nvram", "6100000", "8388608"},
                        Case{"nvram", "0", "8388608"}, Case{"mode", "vld", "lld"}}) {
    PluginOptions o;
    o.file = "disk.img";
    ASSERT_EQ(set_option(&o, k.key, k.value), "") << k.key;
    const std::string err = conflicts_with_image(o, im.sb);
    EXPECT_TRUE(mentions(err, std::string(k.key) + "=")) << err;
    EXPECT_TRUE(mentions(err, "conflicts")) << err;
    EXPECT_TRUE(mentions(err, k.image_value)) << err;
  }
  // The defaults are recorded too: an image made without segment= or
  // nvram= has them, and a different value later conflicts.
  Image plain = lld_image("", "");
  EXPECT_EQ(plain.sb.segment_bytes, 512u * 1024);
  EXPECT_EQ(plain.sb.nvram_bytes, 6'100'000u);
  PluginOptions o;
  o.file = "disk.img";
  ASSERT_EQ(set_option(&o, "nvram", "0"), "");
  EXPECT_TRUE(mentions(conflicts_with_image(o, plain.sb), "nvram=0 conflicts"));
}

TEST(ConflictsWithImage, SegmentAndNvramOnAnotherModesImageNameModeLld) {
  Image im = st19101_image();  // mode=vld
  for (auto [k, v] : {std::pair{"segment", "512K"}, std::pair{"nvram", "6100000"}}) {
    PluginOptions o;
    o.file = "disk.img";
    ASSERT_EQ(set_option(&o, k, v), "");
    const std::string err = conflicts_with_image(o, im.sb);
    EXPECT_TRUE(mentions(err, std::string(k) + "=")) << err;
    EXPECT_TRUE(mentions(err, "mode=lld")) << err;
    EXPECT_TRUE(mentions(err, "disk.img")) << err;
    EXPECT_TRUE(mentions(err, "mode=vld")) << err;
  }
  // mode=lld's run-time parameters are ignored, as fill= is on mode=inplace.
  PluginOptions o;
  o.file = "disk.img";
  ASSERT_EQ(set_option(&o, "partial", "50"), "");
  ASSERT_EQ(set_option(&o, "cleaner_policy", "cost-benefit"), "");
  ASSERT_EQ(set_option(&o, "nvram_us", "1"), "");
  EXPECT_EQ(conflicts_with_image(o, im.sb), "");
}

TEST(ConflictsWithImage, ReopeningWithTheCreatingOverridesAgrees) {
  // docs/geometry.md: overrides "are stored in the image, and repeating one
  // on a later start must agree with it".
  PluginOptions o;
  o.file = "disk.img";
  for (auto [k, v] : std::vector<std::pair<const char*, const char*>>{
           {"size", "16M"}, {"geometry", "st19101"}, {"rpm", "5400"}, {"head_switch_us", "700"}})
    ASSERT_EQ(set_option(&o, k, v), "") << k;
  FormatOptions f;
  ASSERT_EQ(format_options(o, &f), "");
  Superblock sb = plan_image(f);
  EXPECT_EQ(conflicts_with_image(o, sb), "");
  // Without the override it is a different drive.
  PluginOptions p = o;
  p.rpm.reset();
  p.head_switch_us.reset();
  EXPECT_EQ(conflicts_with_image(p, sb), "") << "omitting an override means 'as the image says'";
  p.rpm = 10000;
  EXPECT_TRUE(mentions(conflicts_with_image(p, sb), "rpm="));
}

// ------------------------------------------------------------- span=

// A new image's options with span= (and more key=values); its error or "".
std::string span_format(std::vector<std::pair<const char*, const char*>> kv, FormatOptions* f) {
  PluginOptions o;
  o.file = "disk.img";
  for (auto [k, v] : kv) EXPECT_EQ(set_option(&o, k, v), "") << k;
  return format_options(o, f);
}

TEST(SpanOption, ResolvesOnTheDriveAndRefusesSpareBesideIt) {
  FormatOptions f;
  ASSERT_EQ(span_format({{"size", "64M"}, {"geometry", "savvio10k4"}, {"span", "90%-100%"}}, &f),
            "");
  EXPECT_EQ(f.span, (CylinderSpan{132858, 147619}));
  EXPECT_EQ(f.geometry.cylinders, 147620u) << "the drive; plan_image takes the band";
  // cylinders= resizes the drive the percent counts on.
  ASSERT_EQ(span_format({{"size", "64M"}, {"cylinders", "1000"}, {"span", "10%"}}, &f), "");
  EXPECT_EQ(f.span, (CylinderSpan{0, 99}));
  EXPECT_EQ(span_format({{"size", "64M"}, {"spare", "10"}, {"span", "0-999"}}, &f),
            "spare=10 does not apply beside span=0-999: the span's cylinders are all platters; "
            "drop spare= or span=");
  EXPECT_EQ(span_format({{"size", "64M"}, {"span", "0-7000"}}, &f),
            "span=0-7000: reaches past the drive: the st19101 has 6962 cylinders (0-6961); "
            "choose cylinders within them");
  EXPECT_EQ(span_format({{"size", "64M"}, {"cylinders", "10"}, {"span", "0%-5%"}}, &f),
            "span=0%-5%: holds no whole cylinder: the st19101 has 10 cylinders (0-9); widen the "
            "span");
}

Image span_image(const char* span) {
  Image im;
  PluginOptions& o = im.made_with;
  o.file = "disk.img";
  EXPECT_EQ(set_option(&o, "size", "64M"), "");
  EXPECT_EQ(set_option(&o, "span", span), "");
  FormatOptions f;
  EXPECT_EQ(format_options(o, &f), "");
  im.sb = plan_image(f);
  return im;
}

std::string reopen_with(const Superblock& sb, std::vector<std::pair<const char*, const char*>> kv) {
  PluginOptions o;
  o.file = "disk.img";
  for (auto [k, v] : kv) EXPECT_EQ(set_option(&o, k, v), "") << k;
  return conflicts_with_image(o, sb);
}

TEST(SpanOption, ReopeningNamesTheImagesSpan) {
  const Image im = span_image("6000-6099");
  EXPECT_EQ(conflicts_with_image(im.made_with, im.sb), "");
  EXPECT_EQ(reopen_with(im.sb, {}), "");
  // The same cylinders, said otherwise; and the drive's cylinders.
  EXPECT_EQ(reopen_with(im.sb, {{"span", "6000-6099"}, {"cylinders", "6962"},
                                {"sectors_per_track", "256"}, {"geometry", "st19101"}}),
            "");
  EXPECT_EQ(reopen_with(im.sb, {{"span", "0-99"}}),
            "span=0-99 conflicts with file=disk.img, which has span=6000-6099; drop span= to "
            "use the image as it is, or give a new file=");
  EXPECT_EQ(reopen_with(im.sb, {{"span", "90%-100%"}}),
            "span=90%-100% (cylinders 6265-6961) conflicts with file=disk.img, which has "
            "span=6000-6099; drop span= to use the image as it is, or give a new file=");
  EXPECT_EQ(reopen_with(im.sb, {{"spare", "25"}}),
            "spare=25 does not apply to file=disk.img, whose platters are span=6000-6099; drop "
            "spare=");
  EXPECT_EQ(reopen_with(im.sb, {{"cylinders", "100"}}),
            "cylinders=100 conflicts with file=disk.img, which has cylinders=6962; drop "
            "cylinders= to use the image as it is, or give a new file=");
  const Image plain = st19101_image();
  EXPECT_EQ(reopen_with(plain.sb, {{"span", "0-99"}}),
            "span=0-99 conflicts with file=disk.img, which has no span (its platters are the "
            "outermost 41 cylinders); drop span= to use the image as it is, or give a new file=");
}

}  // namespace
}  // namespace vld
