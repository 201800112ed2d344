from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("webhooks", "0002_outcome_pricing")]

    operations = [
        migrations.AddField(
            model_name="webhookdelivery",
            name="claim_token",
            field=models.UUIDField(blank=True, editable=False, null=True),
        ),
    ]
