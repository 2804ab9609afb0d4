#include "trialshim/trainer/app_log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <string>

namespace trialshim::trainer {
namespace {

class AppSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit AppSink(app::Logger* log) : log_(log) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    app::Level level = app::Level::kInfo;
    switch (msg.level) {
      case spdlog::level::trace:
      case spdlog::level::debug:
        level = app::Level::kDebug;
        break;
      case spdlog::level::warn:
        level = app::Level::kWarning;
        break;
      case spdlog::level::err:
      case spdlog::level::critical:
        level = app::Level::kError;
        break;
      default:
        break;
    }
    log_->Log(level, std::string(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}

 private:
  app::Logger* log_;
};

}  // namespace

std::shared_ptr<spdlog::logger> SpdlogFor(app::Logger* log) {
  auto logger =
      std::make_shared<spdlog::logger>("app", std::make_shared<AppSink>(log));
  logger->set_level(spdlog::level::trace);  // the app's Logger filters
  return logger;
}

}  // namespace trialshim::trainer
