// `trialshim translate [OPTIONS] -- ARG...`: prints what a trial's
// arguments become, one override per line (--format json: one array, for
// values that hold a newline), or with --explain why.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "options.h"
#include "translate_flags.h"
#include "trialshim/translate/translate.h"

namespace trialshim::cli {

using translate::Translate;
using translate::TranslatedArg;
namespace {

struct Flags {
  TranslateFlags translate;
  bool explain = false;
  std::string format = "text";
  std::vector<std::string> args;
};

int RunTranslate(const Flags& flags, const std::vector<std::string>& trailing) {
  TranslateContext ctx;
  Status built = BuildTranslateContext(flags.translate, &ctx);
  if (!built.ok()) {
    std::cerr << "trialshim translate: error: " << built.message() << "\n";
    return ExitCodeFor(built);
  }
  std::vector<std::string> args = flags.args;
  args.insert(args.end(), trailing.begin(), trailing.end());
  StatusOr<std::vector<TranslatedArg>> out = Translate(args, ctx.options);
  if (!out.ok()) {
    std::cerr << "trialshim translate: error: " << out.status().message()
              << "\n";
    return ExitCodeFor(out.status());
  }
  if (flags.format == "json" && !flags.explain) {
    std::vector<std::string> overrides;
    for (const TranslatedArg& t : *out) overrides.push_back(t.output);
    std::cout << ArgvJson(overrides) << "\n";
    return 0;
  }
  for (const TranslatedArg& t : *out) {
    if (!flags.explain) {
      std::cout << t.output << "\n";
      continue;
    }
    std::string in;
    for (const std::string& i : t.inputs) in += (in.empty() ? "" : " ") + i;
    std::cout << in << "\n    -> " << t.output << "\n       " << t.explanation
              << "\n";
  }
  return 0;
}

}  // namespace

void AddTranslateCommand(CLI::App& app,
                         const std::vector<std::string>* trailing,
                         int* exit_code) {
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "translate",
      "Print the Hydra overrides a trial's arguments become, one per line "
      "(put the arguments after --)");
  AddTranslateFlags(cmd, &flags->translate);
  AddOption(cmd, translate::OptionId::kExplain, &flags->explain);
  AddOption(cmd, translate::OptionId::kTranslateFormat, &flags->format)
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("args", flags->args,
                  "Arguments not starting with '-' (others go after --)");
  cmd->callback([flags, trailing, exit_code] {
    *exit_code = RunTranslate(*flags, *trailing);
  });
}

}  // namespace trialshim::cli
