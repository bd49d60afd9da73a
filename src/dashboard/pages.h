// One function per dashboard page (include/pipette/dashboard.h lists them); RenderDashboard
// (dashboard.cc) routes paths here. Each reads only what it shows through bounded store queries
// (a page of ListResults, a capped Records), so a page costs the same with a million results.
#pragma once

#include <string>

#include "dashboard/params.h"
#include "pipette/dashboard.h"
#include "pipette/fleet_store.h"

namespace pipette::dashboard {

// Rows per page of the leaderboard unless ?limit= says otherwise (1..1000).
inline constexpr int kDefaultPageSize = 100;

DashboardResponse LeaderboardPage(FleetStore& store, const Query& query);
DashboardResponse ScalingPage(FleetStore& store, const Query& query);
DashboardResponse QualityPage(FleetStore& store, const Query& query);
DashboardResponse OneResultPage(FleetStore& store, const std::string& result_id);
DashboardResponse DevicesPage(FleetStore& store, const Query& query);
DashboardResponse DevicePage(FleetStore& store, const std::string& device_id);
DashboardResponse ComparePage(FleetStore& store, const Query& query);
DashboardResponse FleetPage(FleetStore& store);
DashboardResponse PlanPage(FleetStore& store, const std::string& plan_id);

}  // namespace pipette::dashboard
