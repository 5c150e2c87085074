// A test fixture for libo2lnd and o2ctl on the fake kernel: a FakeKernel,
// a Device attached to it, and o2ctl run on it with its output captured.
#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "fake_kernel.h"
#include "o2ctl/cli.h"
#include "o2lnd/backend.h"
#include "o2lnd/device.h"

namespace o2ctl::test_support {

class O2ctlTest : public ::testing::Test {
 protected:
  // A Device on the fake kernel; fails the test when it does not attach.
  o2lnd::Device attach_ok() {
    auto dev =
        o2lnd::Device::attach(std::make_unique<o2lnd::testing::FakeBackend>(kernel_), "o2ctl");
    EXPECT_TRUE(dev.ok()) << dev.error().message;
    return std::move(*dev);
  }

  // Runs o2ctl with `args` (without "o2ctl"); returns its exit status.
  int o2ctl(std::vector<std::string_view> args) {
    out_.str("");
    err_.str("");
    Env env{out_, err_,
            [this](const std::string&) -> o2lnd::Result<std::unique_ptr<o2lnd::Backend>> {
              ++kernel_->opens;
              return std::unique_ptr<o2lnd::Backend>(
                  std::make_unique<o2lnd::testing::FakeBackend>(kernel_));
            }};
    return run(args, env);
  }
  // o2ctl's output for `args`; fails the test when it does not exit 0.
  std::string output(std::vector<std::string_view> args) {
    EXPECT_EQ(o2ctl(std::move(args)), kExitOk) << err_.str();
    return out_.str();
  }
  [[nodiscard]] std::string out() const { return out_.str(); }
  [[nodiscard]] std::string err() const { return err_.str(); }

  std::shared_ptr<o2lnd::testing::FakeKernel> kernel_ =
      std::make_shared<o2lnd::testing::FakeKernel>();
  std::ostringstream out_;
  std::ostringstream err_;
};

}  // namespace o2ctl::test_support
