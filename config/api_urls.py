"""Every REST endpoint, under /api/."""

from __future__ import annotations

from django.urls import include, path
from drf_spectacular.views import (
    SpectacularAPIView,
    SpectacularSwaggerSplitView,
)
from rest_framework.routers import DefaultRouter

from checks import api as checks_api
from combat import api as combat_api
from config.schema import CachedSchemaGenerator
from integrations import api as integrations_api
from prep import api as prep_api
from sheets.api.campaigns import CampaignViewSet
from sheets.api.characters import (
    BodyZoneViewSet,
    CharacterViewSet,
    DisciplineViewSet,
    WeaponViewSet,
)
from sheets.api.tokens import ApiTokenViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("campaigns", CampaignViewSet, basename="campaign")
router.register("characters", CharacterViewSet, basename="character")
router.register("tokens", ApiTokenViewSet, basename="token")
router.register(
    r"characters/(?P<character_pk>\d+)/disciplines", DisciplineViewSet, basename="discipline"
)
router.register(r"characters/(?P<character_pk>\d+)/weapons", WeaponViewSet, basename="weapon")
router.register(r"characters/(?P<character_pk>\d+)/zones", BodyZoneViewSet, basename="zone")
combat_api.register(router)
prep_api.register(router)
integrations_api.register(router)
checks_api.register(router)

urlpatterns = [
    path("", include(router.urls)),
    path("rules/", include("rules.api.urls")),
    path(
        "schema/",
        SpectacularAPIView.as_view(generator_class=CachedSchemaGenerator),
        name="schema",
    ),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
]
