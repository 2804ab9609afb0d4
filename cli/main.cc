// trialshim: a thin main over the config and shim libraries.
//
// Start-up is the shim's whole job at each trial, so main builds only the
// CLI11 parsers the command line can reach: the top-level run options, plus
// each subcommand whose name appears among the words CLI11 sees. Building
// all eight subcommands' parsers was two thirds of a trial's start-up
// (bench/README.md, "Start-up, first millisecond"). Anything that ends in a
// parse error or help is parsed again with every subcommand registered, so
// messages and help are those of the whole command line interface.
#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "trialshim/translate/options.h"

namespace {

using trialshim::cli::Trailing;

// The subcommands in the order help lists them; `add` registers one.
struct Subcommand {
  const char* name;
  void (*add)(CLI::App& app, const Trailing* trailing, int* exit_code);
};
using namespace trialshim::cli;
constexpr Subcommand kSubcommands[] = {
    {"compose", [](CLI::App& a, const Trailing*, int* c) { AddComposeCommand(a, c); }},
    {"env", [](CLI::App& a, const Trailing*, int* c) { AddEnvCommand(a, c); }},
    {"launch", [](CLI::App& a, const Trailing*, int* c) { AddLaunchCommand(a, c); }},
    {"check", [](CLI::App& a, const Trailing*, int* c) { AddCheckCommand(a, c); }},
    {"sweep", AddSweepCommand},
    {"job", AddJobCommand},
    {"translate", AddTranslateCommand},
};

bool IsSubcommand(const char* word) {
  for (const Subcommand& s : kSubcommands) {
    if (std::strcmp(word, s.name) == 0) return true;
  }
  return false;
}

// The top-level app; remembers whether CLI11 began running callbacks (after
// that a parse error must not make main parse again and run a command twice).
class TopApp : public CLI::App {
 public:
  using CLI::App::App;
  bool callbacks_started() const { return callbacks_started_; }

 private:
  void pre_callback() override { callbacks_started_ = true; }
  bool callbacks_started_ = false;
};

// The app with the run options and, with `all`, every subcommand, else those
// named among `words` (CLI11 matches names exactly here: no aliases, prefixes
// or ignore_case): a subcommand no word names can neither run nor change how
// a word is read (an option's values stop at a subcommand's name).
std::unique_ptr<TopApp> BuildApp(bool all, const std::vector<const char*>& words,
                                 const Trailing* trailing, int* exit_code) {
  auto app = std::make_unique<TopApp>(
      "trialshim: Vertex AI tuning trials for Hydra apps.\n"
      "Usage: trialshim [OPTIONS] -- COMMAND [ARG...]  translates each ARG "
      "(--key=value -> key=value) and runs COMMAND; or a subcommand");
  app->require_subcommand(0, 1);
  app->set_version_flag("--version",
                        std::string("trialshim ") + TRIALSHIM_VERSION);
  for (const Subcommand& s : kSubcommands) {
    bool named = all;
    for (const char* w : words) named = named || std::strcmp(w, s.name) == 0;
    if (named) s.add(*app, trailing, exit_code);
  }
  SetUpRunCommand(*app, trailing, exit_code);
  return app;
}

// Parses with `app`. Returns -1 when the error or help should come from the
// app with every subcommand instead (nothing has run yet), else the exit code.
int Parse(TopApp& app, bool all, int argc, int parsed_argc, char** argv,
          const int* exit_code) {
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);  // the same text whichever subcommands are built
  } catch (const CLI::ParseError& e) {
    if (!all && !app.callbacks_started()) return -1;
    // CLI11 lists what it could not place, last first; say what was meant.
    std::string explained =
        e.get_exit_code() == 0
            ? ""
            : trialshim::translate::ExplainCommandLine(
                  argv[0], std::vector<std::string>(argv + 1, argv + argc));
    if (explained.empty()) return app.exit(e) == 0 ? 0 : 2;
    std::cerr << "trialshim: error: " << explained << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "trialshim: internal error: " << e.what() << "\n";
    return 1;
  }
  return *exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  int exit_code = 0;
  // Everything after the first "--" is the COMMAND (or translate's ARGs):
  // CLI11 never sees it, so no trainer argument can be taken for ours.
  // Other subcommands parse their own "--" (compose's overrides).
  Trailing trailing;
  int parsed_argc = argc;
  const std::string first = argc < 2 ? "" : argv[1];
  if (argc < 2 || first == "translate" || first == "job" ||
      first == "sweep" || !IsSubcommand(argv[1])) {
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--") == 0) {
        trailing.assign(argv + i + 1, argv + argc);
        parsed_argc = i;
        break;
      }
    }
  }
  const std::vector<const char*> words(argv + 1, argv + parsed_argc);
  for (bool all : {false, true}) {
    exit_code = 0;
    std::unique_ptr<TopApp> app = BuildApp(all, words, &trailing, &exit_code);
    int code = Parse(*app, all, argc, parsed_argc, argv, &exit_code);
    if (code >= 0) return code;
  }
  return 1;  // not reached: the second pass never returns -1
}
