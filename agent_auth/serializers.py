"""Request bodies of the headless endpoints (field names in docs/headless.md)."""

from rest_framework import serializers

CODE_PATTERN = r"^[0-9]{6}$"


class StartClaimSerializer(serializers.Serializer):
    email = serializers.EmailField(max_length=254)


class CompleteClaimSerializer(serializers.Serializer):
    claim_token = serializers.CharField(max_length=128, trim_whitespace=True)
    code = serializers.RegexField(CODE_PATTERN, error_messages={"invalid": "The code is six digits."})
    organization_id = serializers.UUIDField(required=False, allow_null=True)
