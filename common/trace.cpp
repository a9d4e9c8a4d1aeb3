#include "common/trace.hpp"

#include <algorithm>
#include <cstdio>

#include "common/check.hpp"
#include "common/svg.hpp"

namespace gemm {

int64_t trace_count(const std::vector<uint64_t>& stamps) {
  return std::count_if(stamps.begin(), stamps.end(), [](uint64_t t) { return t != 0; });
}

void trace_svg(const std::vector<uint64_t>& stamps, const std::string& title,
               const std::string& path) {
  if (int64_t(stamps.size()) != kTraceSlots) throw Error("trace_svg: wrong buffer size");
  uint64_t t0 = UINT64_MAX, t1 = 0;
  for (uint64_t t : stamps)
    if (t) t0 = std::min(t0, t), t1 = std::max(t1, t);
  if (t1 == 0) throw Error("the kernel recorded no trace (it takes no trace buffer)");

  const double x0 = 150, width = 1100, row_h = 22, pad = 10;
  const double ns_per_px = std::max(1.0, double(t1 - t0) / width);
  auto x = [&](uint64_t t) { return x0 + double(t - t0) / ns_per_px; };
  Svg svg;
  svg.text(10, 18, 13, title);
  svg.text(10, 34, 10,
           "time runs right (" + std::to_string((t1 - t0) / 1000) +
               " us in all, %globaltimer); bars: full barrier passed -> wgmma done (colour = "
               "stage); red: epilogue; ticks: TMA issued");
  double y = 50;
  char buf[160];
  for (int cta = 0; cta < kTraceCtas; ++cta) {
    for (int lane = kTraceLanes - 1; lane >= 0; --lane) {
      bool any = false;
      for (int e = 0; e < kTraceEvents && !any; ++e)
        for (int s = 0; s < kTraceSteps && !any; ++s) any = stamps[trace_slot(cta, e, lane, s)];
      if (!any) continue;
      std::snprintf(
          buf, sizeof buf, "CTA %d %s", cta,
          lane == kTraceLanes - 1 ? "producer" : ("math wg " + std::to_string(lane)).c_str());
      svg.text(10, y + row_h * 0.7, 10, buf);
      for (int s = 0; s < kTraceSteps; ++s) {
        if (uint64_t t = stamps[trace_slot(cta, kTraceTmaIssued, lane, s)])
          svg.body += "<line x1='" + std::to_string(x(t)) + "' x2='" + std::to_string(x(t)) +
                      "' y1='" + std::to_string(y + 3) + "' y2='" + std::to_string(y + row_h - 3) +
                      "' stroke='#1f77b4' stroke-width='1'/>\n";
        const uint64_t a = stamps[trace_slot(cta, kTraceFullDone, lane, s)];
        const uint64_t b = stamps[trace_slot(cta, kTraceMathDone, lane, s)];
        if (a && b && b >= a) svg.cell(x(a), y + 3, std::max(0.5, x(b) - x(a)), row_h - 6, s, "");
        const uint64_t ea = stamps[trace_slot(cta, kTraceEpilogueBegin, lane, s)];
        const uint64_t eb = stamps[trace_slot(cta, kTraceEpilogueEnd, lane, s)];
        if (ea && eb && eb >= ea)
          svg.body += "<rect x='" + std::to_string(x(ea)) + "' y='" + std::to_string(y + 3) +
                      "' width='" + std::to_string(std::max(0.5, x(eb) - x(ea))) + "' height='" +
                      std::to_string(row_h - 6) + "' fill='#d62728' stroke='none'/>\n";
      }
      y += row_h;
    }
    y += pad;
  }
  svg.save(path, x0 + width + 20, y + 10, 8);
}

}  // namespace gemm
