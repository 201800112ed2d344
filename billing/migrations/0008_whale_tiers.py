from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("billing", "0007_bounties_txgen"),
    ]

    operations = [
        migrations.RenameField(model_name="whaletier", old_name="min_balance_atomic", new_name="min_deposit_atomic"),
    ]
