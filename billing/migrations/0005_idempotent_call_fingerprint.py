# An Idempotency-Key is scoped to the call it was first sent with (method, path, parameters).
# Rows written before this migration have no fingerprint: a retry with their key is refused
# (422 idempotency_key_reused) rather than replayed, which can only be safer.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('billing', '0004_payment_settlement_pending'),
    ]

    operations = [
        migrations.AddField(
            model_name='idempotentcall',
            name='fingerprint',
            field=models.CharField(default='', help_text="sha256 of the call's method, path, query and body", max_length=64),
        ),
    ]
