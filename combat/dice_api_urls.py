"""The public rules API under /api/rules/ (see combat/dice_api.py)."""

from __future__ import annotations

from django.urls import path

from combat import dice_api

urlpatterns = [
    path("omg/check/", dice_api.OmgCheckView.as_view(), name="rules_omg_check"),
    path("omg/odds/", dice_api.OmgOddsView.as_view(), name="rules_omg_odds"),
    path("omg/strike/", dice_api.OmgStrikeView.as_view(), name="rules_omg_strike"),
    path("omg/strike/odds/", dice_api.OmgStrikeOddsView.as_view(), name="rules_omg_strike_odds"),
    path("ogs/check/", dice_api.OgsCheckView.as_view(), name="rules_ogs_check"),
    path("ogs/odds/", dice_api.OgsOddsView.as_view(), name="rules_ogs_odds"),
    path("ogs/opposed/", dice_api.OgsOpposedView.as_view(), name="rules_ogs_opposed"),
    path("ogs/opposed/odds/", dice_api.OgsOpposedOddsView.as_view(), name="rules_ogs_opposed_odds"),
    path("ogs/open/", dice_api.OgsOpenView.as_view(), name="rules_ogs_open"),
    path("ogs/increase/", dice_api.OgsIncreaseView.as_view(), name="rules_ogs_increase"),
    path("ore/roll/", dice_api.OreRollView.as_view(), name="rules_ore_roll"),
    path("ore/odds/", dice_api.OreOddsView.as_view(), name="rules_ore_odds"),
    path("ore/contest/", dice_api.OreContestView.as_view(), name="rules_ore_contest"),
    path("ore/contest/odds/", dice_api.OreContestOddsView.as_view(), name="rules_ore_contest_odds"),
    path("ore/gobble/", dice_api.OreGobbleView.as_view(), name="rules_ore_gobble"),
    path("ore/multiple/", dice_api.OreMultipleView.as_view(), name="rules_ore_multiple"),
    path("ore/cooperate/", dice_api.OreCooperateView.as_view(), name="rules_ore_cooperate"),
    path("sds/check/", dice_api.SdsCheckView.as_view(), name="rules_sds_check"),
    path("sds/odds/", dice_api.SdsOddsView.as_view(), name="rules_sds_odds"),
    path("okrpg/damage/", dice_api.OkrpgDamageView.as_view(), name="rules_okrpg_damage"),
    path("okrpg/round/", dice_api.OkrpgRoundView.as_view(), name="rules_okrpg_round"),
    path("okrpg/tide/", dice_api.OkrpgTideView.as_view(), name="rules_okrpg_tide"),
    path("okrpg/odds/", dice_api.OkrpgOddsView.as_view(), name="rules_okrpg_odds"),
]
