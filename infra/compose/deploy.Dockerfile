# The compose pipeline's one-shot `deploy` service: `./tally deploy --env infra/compose/deploy.env`,
# the same command that puts Tally onto any user's clusters. It needs what deploy runs: the
# launcher with its Python packages, psql (the control plane's migrations and roles), a JRE (the
# registry jar registers the schemas) and the built jars it uploads to Flink.
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
RUN mvn -B -q -s infra/maven-settings.xml package -DskipTests

FROM eclipse-temurin:17-jre
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv postgresql-client \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src /opt/tally
RUN python3 -m venv /opt/tally-venv \
    && /opt/tally-venv/bin/pip install -q -r /opt/tally/infra/requirements.txt \
    && cp /opt/tally/infra/requirements.txt /opt/tally-venv/.requirements.txt \
    && useradd --system --uid 10001 --no-create-home tally
# not root: deploy only talks to the servers over the network
USER 10001
ENV TALLY_VENV=/opt/tally-venv TALLY_HOME=/tmp/tally
WORKDIR /opt/tally
ENTRYPOINT ["./tally", "deploy", "--env", "infra/compose/deploy.env"]
