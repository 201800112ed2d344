"""Catalog agents list what they answer: the decorative `skills` (ids such as "news-catalog"
that no endpoint took) give way to `free_skills`, the names of the free catalogs an agent
answers besides its SKUs. An old skill whose id names a free catalog (news-catalog ->
news_catalog) is kept as one; the others were never callable and are dropped."""

from __future__ import annotations

from django.db import migrations, models

# The free catalogs when this migration was written (agents/discovery/views.py FREE_CAPABILITIES).
FREE = ("telemetry_status", "news_catalog", "exchange_market_discovery", "tokenized_watchlist", "market_agent_news")


def skills_to_free_skills(apps, schema_editor):
    CatalogAgent = apps.get_model("catalog", "CatalogAgent")
    for agent in CatalogAgent.objects.all():
        ids = [str(s.get("id", "")).replace("-", "_") for s in agent.skills or [] if isinstance(s, dict)]
        agent.free_skills = [i for i in dict.fromkeys(ids) if i in FREE]
        agent.save(update_fields=["free_skills"])


class Migration(migrations.Migration):
    dependencies = [("catalog", "0013_feedstate_failed_feeds_oddities")]

    operations = [
        migrations.AddField(
            model_name="catalogagent",
            name="free_skills",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text='names of the free catalogs this agent also answers, e.g. ["news_catalog"] '
                "(the hub's free skills: telemetry_status, news_catalog, exchange_market_discovery, "
                "tokenized_watchlist, market_agent_news); any other name is not listed",
            ),
        ),
        migrations.RunPython(skills_to_free_skills, migrations.RunPython.noop),
        migrations.RemoveField(model_name="catalogagent", name="skills"),
    ]
