"""Routes of the public rules API under /api/rules/ (see rules/api/base.py)."""

from __future__ import annotations

from django.urls import path

from rules.api import ogs, okrpg, omg, ore, sds

urlpatterns = [
    path("omg/check/", omg.OmgCheckView.as_view(), name="rules_omg_check"),
    path("omg/odds/", omg.OmgOddsView.as_view(), name="rules_omg_odds"),
    path("omg/strike/", omg.OmgStrikeView.as_view(), name="rules_omg_strike"),
    path("omg/strike/odds/", omg.OmgStrikeOddsView.as_view(), name="rules_omg_strike_odds"),
    path("ogs/check/", ogs.OgsCheckView.as_view(), name="rules_ogs_check"),
    path("ogs/odds/", ogs.OgsOddsView.as_view(), name="rules_ogs_odds"),
    path("ogs/opposed/", ogs.OgsOpposedView.as_view(), name="rules_ogs_opposed"),
    path("ogs/opposed/odds/", ogs.OgsOpposedOddsView.as_view(), name="rules_ogs_opposed_odds"),
    path("ogs/open/", ogs.OgsOpenView.as_view(), name="rules_ogs_open"),
    path("ogs/increase/", ogs.OgsIncreaseView.as_view(), name="rules_ogs_increase"),
    path("ore/roll/", ore.OreRollView.as_view(), name="rules_ore_roll"),
    path("ore/odds/", ore.OreOddsView.as_view(), name="rules_ore_odds"),
    path("ore/contest/", ore.OreContestView.as_view(), name="rules_ore_contest"),
    path("ore/contest/odds/", ore.OreContestOddsView.as_view(), name="rules_ore_contest_odds"),
    path("ore/gobble/", ore.OreGobbleView.as_view(), name="rules_ore_gobble"),
    path("ore/multiple/", ore.OreMultipleView.as_view(), name="rules_ore_multiple"),
    path("ore/cooperate/", ore.OreCooperateView.as_view(), name="rules_ore_cooperate"),
    path("sds/check/", sds.SdsCheckView.as_view(), name="rules_sds_check"),
    path("sds/odds/", sds.SdsOddsView.as_view(), name="rules_sds_odds"),
    path("okrpg/damage/", okrpg.OkrpgDamageView.as_view(), name="rules_okrpg_damage"),
    path("okrpg/round/", okrpg.OkrpgRoundView.as_view(), name="rules_okrpg_round"),
    path("okrpg/tide/", okrpg.OkrpgTideView.as_view(), name="rules_okrpg_tide"),
    path("okrpg/odds/", okrpg.OkrpgOddsView.as_view(), name="rules_okrpg_odds"),
]
