from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("billing", "0015_payment_channels"),
    ]

    operations = [
        migrations.AddField(
            model_name="channelsale",
            name="delivered_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        # Every sale before this field was delivered (or its product failed with no way to collect).
        migrations.RunSQL(
            "UPDATE billing_channelsale SET delivered_at = created_at", reverse_sql=migrations.RunSQL.noop
        ),
    ]
