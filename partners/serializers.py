from rest_framework import serializers


class LoginSerializer(serializers.Serializer):
    email = serializers.CharField(max_length=254, trim_whitespace=True)
    password = serializers.CharField(max_length=1024, trim_whitespace=False)


class LoginResponseSerializer(serializers.Serializer):
    token = serializers.CharField()
    tokenType = serializers.CharField()
    expiresIn = serializers.IntegerField(help_text="Seconds until the token expires.")
